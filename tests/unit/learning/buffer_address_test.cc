// The same parameters give bit-identical losses and gradients wherever the caller keeps
// them: the simulator and real peers hold models at unrelated addresses, and their results
// must match bit for bit. The network computes in place when a buffer is aligned like its
// own copies and copies otherwise; both paths must agree. So must the gradient-noise
// estimates, which the backup-worker policy acts on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "learning/model.h"
#include "tests/unit/learning/test_data.h"

namespace fastk::learning {
namespace {

// A view of `count` floats inside `storage` starting `offset_bytes` past a 64-byte boundary.
std::span<float> at_offset(std::vector<float>& storage, std::size_t offset_bytes,
                           std::size_t count) {
  const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
  const std::size_t skip_bytes = (64 - address % 64) % 64 + offset_bytes;
  EXPECT_EQ(skip_bytes % sizeof(float), 0u);
  return std::span(storage).subspan(skip_bytes / sizeof(float), count);
}

TEST(BufferAddress, LossAndGradientDoNotDependOnWhereBuffersLive) {
  // Odd layer sizes, so that no layer's block starts on a vector boundary by luck.
  const SampleShape shape{1, 1, 13};
  const Dataset data = testing::random_dataset(shape, 3, 40, 7);
  ModelSpec spec;
  spec.kind = ModelKind::kMlp;
  spec.hidden = {11, 5};
  spec.l2 = 0.01;
  auto model = make_model(spec, data);
  const std::size_t n = model->num_parameters();
  std::vector<float> initial(n);
  model->initialize(initial, 3);
  std::vector<std::int64_t> rows(40);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);

  std::vector<float> reference_grad;
  double reference_loss = 0;
  GradientNoise reference_noise;
  for (std::size_t offset : {0, 4, 8, 16, 32, 60}) {
    std::vector<float> param_storage(n + 32), grad_storage(n + 32), estimated_storage(n + 32);
    auto params = at_offset(param_storage, offset, n);
    auto grad = at_offset(grad_storage, (64 - offset) % 64, n);
    auto estimated = at_offset(estimated_storage, offset, n);
    std::copy(initial.begin(), initial.end(), params.begin());
    const double loss = model->loss_and_gradient(params, {&data, rows}, grad);
    GradientNoise noise;
    model->loss_and_gradient(params, {&data, rows}, estimated, &noise);
    ASSERT_TRUE(noise.valid);
    EXPECT_EQ(std::memcmp(grad.data(), estimated.data(), n * sizeof(float)), 0)
        << "gradient with estimates, at offset " << offset;
    if (reference_grad.empty()) {
      reference_grad.assign(grad.begin(), grad.end());
      reference_loss = loss;
      reference_noise = noise;
      continue;
    }
    EXPECT_EQ(loss, reference_loss) << "parameters at offset " << offset;
    EXPECT_EQ(std::memcmp(grad.data(), reference_grad.data(), n * sizeof(float)), 0)
        << "parameters at offset " << offset;
    EXPECT_EQ(noise.variance, reference_noise.variance) << "parameters at offset " << offset;
    EXPECT_EQ(noise.squared_norm, reference_noise.squared_norm)
        << "parameters at offset " << offset;
  }
}

}  // namespace
}  // namespace fastk::learning
