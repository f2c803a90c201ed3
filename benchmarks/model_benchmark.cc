// Loss + gradient of every model at batch 32 on one core, in samples/s and achieved FLOP/s,
// next to a plain Eigen matrix product of the MLP 784-128-10 first layer's shape
// (128 x 784 times 784 x 32): the rate a gradient built on matrix products can hope for.
// The FLOP count of a model is that of its matrix products (forward, parameter gradients,
// and input gradients of every layer but the first); element-wise work is not counted.
// Each model's *_Noise variant also asks for the gradient-noise estimates; compare the two
// with interleaved repetitions, e.g. --benchmark_repetitions=9
// --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true.
#include <benchmark/benchmark.h>

#include <numeric>

#include "benchmarks/random_images.h"
#include "learning/model.h"
#include "learning/random.h"
#include "third_party/eigen.h"

namespace fastk::learning {
namespace {

constexpr int kBatch = 32;

void set_rates(benchmark::State& state, double flops_per_iteration) {
  state.counters["samples/s"] =
      benchmark::Counter(double(kBatch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["FLOP/s"] =
      benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

// With `estimate`, the same call also computes the gradient-noise estimates (S and G of
// learning/gradient_noise.h): its time against the plain call's is the estimate's overhead.
void loss_and_gradient(benchmark::State& state, ModelSpec spec, SampleShape shape,
                       bool estimate = false) {
  const Dataset data = bench::random_images(shape, 4 * kBatch);
  auto model = make_model(spec, data);
  std::vector<float> params(model->num_parameters()), grad(params.size());
  model->initialize(params, 1);
  std::vector<std::int64_t> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0);
  std::int64_t batch = 0;
  GradientNoise noise;
  GradientNoise* const wanted = estimate ? &noise : nullptr;
  for (auto _ : state) {
    BatchView view{&data, std::span(rows).subspan(std::size_t(batch % 4) * kBatch, kBatch)};
    benchmark::DoNotOptimize(model->loss_and_gradient(params, view, grad, wanted));
    benchmark::DoNotOptimize(noise);
    benchmark::ClobberMemory();
    ++batch;
  }
  set_rates(state, model->flops_per_sample() * kBatch);
}

void BM_MatrixProduct_128x784_784x32(benchmark::State& state) {
  Eigen::MatrixXf w = Eigen::MatrixXf::Random(128, 784);
  Eigen::MatrixXf x = Eigen::MatrixXf::Random(784, kBatch);
  Eigen::MatrixXf y(128, kBatch);
  for (auto _ : state) {
    y.noalias() = w * x;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_rates(state, 2.0 * 128 * 784 * kBatch);
}
BENCHMARK(BM_MatrixProduct_128x784_784x32);

void BM_LogisticRegression_784x10(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLogisticRegression}, {1, 28, 28});
}
BENCHMARK(BM_LogisticRegression_784x10);

void BM_LogisticRegression_784x10_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLogisticRegression}, {1, 28, 28}, true);
}
BENCHMARK(BM_LogisticRegression_784x10_Noise);

void BM_Mlp_784x128x10(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kMlp, .hidden = {128}}, {1, 28, 28});
}
BENCHMARK(BM_Mlp_784x128x10);

void BM_Mlp_784x128x10_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kMlp, .hidden = {128}}, {1, 28, 28}, true);
}
BENCHMARK(BM_Mlp_784x128x10_Noise);

void BM_Lenet_28x28x1(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLenet}, {1, 28, 28});
}
BENCHMARK(BM_Lenet_28x28x1);

void BM_Lenet_28x28x1_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLenet}, {1, 28, 28}, true);
}
BENCHMARK(BM_Lenet_28x28x1_Noise);

void BM_CifarCnn_32x32x3(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kCifarCnn}, {3, 32, 32});
}
BENCHMARK(BM_CifarCnn_32x32x3);

void BM_CifarCnn_32x32x3_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kCifarCnn}, {3, 32, 32}, true);
}
BENCHMARK(BM_CifarCnn_32x32x3_Noise);

}  // namespace
}  // namespace fastk::learning

BENCHMARK_MAIN();
