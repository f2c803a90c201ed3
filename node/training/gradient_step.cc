#include "node/training/gradient_step.h"

#include <algorithm>

#include "learning/gradient_noise.h"

namespace fastk::node::training {

GradientStep compute_gradient(learning::Model& model, const learning::Dataset& data,
                              std::span<const std::int64_t> batch, std::span<const float> params,
                              bool estimate_noise, std::vector<float> buffer) {
  GradientStep step;
  // loss_and_gradient overwrites every value: a recycled buffer needs no zero-fill.
  std::vector<float> grad = std::move(buffer);
  grad.resize(model.num_parameters());
  learning::GradientNoise noise;
  step.loss =
      model.loss_and_gradient(params, {&data, batch}, grad, estimate_noise ? &noise : nullptr);
  step.result.gradient = std::move(grad);
  step.result.stats = {noise.squared_norm, noise.variance, noise.valid};
  return step;
}

int partition_batch_size(const consensus::StartGradient& request, int batch_size) {
  if (!request.split_batch || request.partitions.empty()) return batch_size;
  return std::max(1, batch_size / static_cast<int>(request.partitions.size()));
}

std::vector<std::vector<std::int64_t>> draw_partition_batches(
    const consensus::StartGradient& request, int batch_size,
    const std::function<learning::BatchSampler&(int partition)>& sampler_of) {
  const int size = partition_batch_size(request, batch_size);
  std::vector<std::vector<std::int64_t>> batches;
  for (int r : request.partitions) {
    const auto batch = sampler_of(r).next(size);
    batches.emplace_back(batch.begin(), batch.end());
  }
  return batches;
}

GradientStep compute_partition_gradients(learning::Model& model, const learning::Dataset& data,
                                         const std::vector<std::vector<std::int64_t>>& batches,
                                         std::span<const float> params) {
  GradientStep step;
  const std::size_t p = model.num_parameters();
  step.result.gradient.resize(p * batches.size());
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const std::span<float> out(step.result.gradient.data() + b * p, p);
    const double loss = model.loss_and_gradient(params, {&data, batches[b]}, out);
    if (b == 0) step.loss = loss;
  }
  return step;
}

}  // namespace fastk::node::training
