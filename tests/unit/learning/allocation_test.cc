// Steady-state loss_and_gradient calls allocate nothing: this binary interposes glibc's malloc
// family (which operator new and Eigen's aligned allocator both use) to count allocations
// between a warm-up call and the next ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <numeric>

#include "learning/model.h"
#include "learning/sgd.h"
#include "tests/unit/learning/test_data.h"
#include "third_party/eigen.h"

namespace {
std::size_t allocations = 0;
}  // namespace

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* malloc(std::size_t size) {
  ++allocations;
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  ++allocations;
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) {
  ++allocations;
  return __libc_realloc(p, size);
}
}

namespace fastk::learning {
namespace {

// With `estimate`, the calls also ask for the gradient-noise estimates (the warm-up too),
// and the steady state alternates calls with and without.
std::size_t allocations_of_steady_state(const ModelSpec& spec, SampleShape shape,
                                        bool estimate = false) {
  Dataset data = testing::random_dataset(shape, 10, 8, 1);
  auto model = make_model(spec, data);
  std::vector<float> params(model->num_parameters()), grad(params.size());
  model->initialize(params, 1);
  std::vector<std::int64_t> first = {0, 1, 2, 3}, second = {4, 5, 6, 7};
  Sgd sgd(OptimizerSpec{.momentum = 0.9}, params.size(), 10);
  GradientNoise noise;
  GradientNoise* const wanted = estimate ? &noise : nullptr;
  model->loss_and_gradient(params, {&data, first}, grad, wanted);  // warm-up: sizes the scratch
  sgd.step(params, grad, 0);
  const std::size_t before = allocations;
  model->loss_and_gradient(params, {&data, second}, grad, wanted);
  sgd.step(params, grad, 1);
  model->loss_and_gradient(params, {&data, first}, grad);
  model->loss_and_gradient(params, {&data, second}, grad, wanted);
  const std::size_t after = allocations;
  if (estimate) {
    EXPECT_TRUE(noise.valid);
  }
  return after - before;
}

TEST(Allocation, SteadyStateGradientsAndStepsAllocateNothing) {
  for (bool estimate : {false, true}) {
    SCOPED_TRACE(estimate ? "with gradient-noise estimates" : "plain");
    EXPECT_EQ(
        allocations_of_steady_state({.kind = ModelKind::kLogisticRegression}, {1, 1, 20}, estimate),
        0u);
    EXPECT_EQ(allocations_of_steady_state({.kind = ModelKind::kLogisticRegression, .l2 = 0.1},
                                          {1, 1, 20}, estimate),
              0u);
    EXPECT_EQ(allocations_of_steady_state({.kind = ModelKind::kMlp, .hidden = {16, 8}}, {1, 1, 20},
                                          estimate),
              0u);
    EXPECT_EQ(allocations_of_steady_state({.kind = ModelKind::kLenet}, {1, 28, 28}, estimate), 0u);
    EXPECT_EQ(allocations_of_steady_state({.kind = ModelKind::kCifarCnn}, {3, 32, 32}, estimate),
              0u);
  }
}

TEST(Allocation, TheCounterSeesAllocations) {
  const std::size_t before = allocations;
  auto* v = new std::vector<int>(100);
  delete v;
  EXPECT_GE(allocations - before, 2u);
  const std::size_t after_new = allocations;
  Eigen::MatrixXf m;
  m.resize(40, 40);
  EXPECT_GE(allocations - after_new, 1u);
}

}  // namespace
}  // namespace fastk::learning
