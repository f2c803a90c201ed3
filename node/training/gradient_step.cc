#include "node/training/gradient_step.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "learning/gradient_noise.h"
#include "learning/random.h"

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

std::vector<std::int64_t> validation_positions(std::int64_t own_size, std::uint64_t seed,
                                               std::int64_t k, int batch) {
  if (own_size <= 0 || batch <= 0) {
    throw std::invalid_argument("validation: " + std::to_string(batch) + " samples of a shard of " +
                                std::to_string(own_size));
  }
  std::vector<std::int64_t> positions;
  positions.reserve(static_cast<std::size_t>(batch));
  std::uint64_t state = learning::mix64(seed ^ learning::mix64(static_cast<std::uint64_t>(k)));
  for (int b = 0; b < batch; ++b) {
    state = learning::mix64(state + 0x9e3779b97f4a7c15ULL);
    positions.push_back(static_cast<std::int64_t>(state % static_cast<std::uint64_t>(own_size)));
  }
  return positions;
}

std::vector<double> validation_losses(learning::Model& model, const learning::Dataset& data,
                                      std::span<const std::int64_t> rows,
                                      const consensus::StartValidation& request) {
  const learning::Dataset batch = learning::select_rows(data, rows);
  std::vector<double> losses;
  for (const consensus::Params& params : request.models) {
    const bool fits = params && params->values().size() == model.num_parameters();
    losses.push_back(fits ? model.evaluate(params->values(), batch).loss
                          : std::numeric_limits<double>::quiet_NaN());
  }
  return losses;
}

}  // namespace fastk::node::training
