#include "node/training/gradient_step.h"

#include <algorithm>

#include "consensus/gradient_stats.h"

namespace fastk::node::training {

GradientStep compute_gradient(learning::Model& model, const learning::Dataset& data,
                              std::span<const std::int64_t> batch, std::span<const float> params,
                              int micro_batches, std::vector<float> buffer) {
  GradientStep step;
  const std::size_t p = model.num_parameters();
  const int pieces = std::min<int>(micro_batches, static_cast<int>(batch.size()));
  if (pieces <= 1) {
    // loss_and_gradient overwrites every value: a recycled buffer needs no zero-fill.
    std::vector<float> grad = std::move(buffer);
    grad.resize(p);
    step.loss = model.loss_and_gradient(params, {&data, batch}, grad);
    step.result.gradient = std::move(grad);
    return step;
  }
  // Micro-batch sizes differ by at most one (the remainder goes to the last ones); the mean
  // of their gradients is the batch gradient up to that size difference.
  std::vector<float> grad(p);
  consensus::MicroBatchAccumulator acc(p);
  std::size_t first = 0;
  double loss = 0;
  for (int m = 0; m < pieces; ++m) {
    const std::size_t size =
        (batch.size() + static_cast<std::size_t>(m)) / static_cast<std::size_t>(pieces);
    loss += model.loss_and_gradient(params, {&data, batch.subspan(first, size)}, grad) *
            static_cast<double>(size);
    acc.add(grad);
    first += size;
  }
  step.loss = loss / static_cast<double>(batch.size());
  step.result.gradient = std::move(buffer);
  step.result.gradient.assign(p, 0.0f);
  step.result.stats = acc.finish(step.result.gradient);
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
