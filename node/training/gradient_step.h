// One peer's mini-batch gradient, shared by the simulator and real peers so that both
// compute bit-identical gradients from the same parameters and batch.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "consensus/actions.h"
#include "consensus/runtime_sources.h"
#include "learning/dataset.h"
#include "learning/model.h"
#include "learning/sampler.h"

namespace fastk::node::training {

struct GradientStep {
  consensus::GradientResult result;  // gradient (+ its noise statistics when estimated)
  double loss = 0;                   // mean mini-batch loss
};

// One pass over the whole batch; with `estimate_noise` the same pass also yields the
// gradient-noise estimates the adaptive policy uses (learning/gradient_noise.h), and the
// gradient's bits are the same either way. The gradient is written into `buffer` (moved into
// the result): a caller that hands back the previous gradient's vector saves an allocation
// and a zero-fill of a model-sized buffer per gradient.
GradientStep compute_gradient(learning::Model& model, const learning::Dataset& data,
                              std::span<const std::int64_t> batch, std::span<const float> params,
                              bool estimate_noise, std::vector<float> buffer = {});

// Coded neighbourhoods: the samples each partition of `request` gets. With split batches
// one mini-batch is spread over the partitions (batch_size / partitions, at least 1), so a
// coded iteration costs about one uncoded gradient; otherwise each gets a whole batch.
int partition_batch_size(const consensus::StartGradient& request, int batch_size);

// The batches of a coded request, one per partition in request order, each drawn from
// `sampler_of(partition)` with partition_batch_size samples. Both runtimes draw this way.
std::vector<std::vector<std::int64_t>> draw_partition_batches(
    const consensus::StartGradient& request, int batch_size,
    const std::function<learning::BatchSampler&(int partition)>& sampler_of);

// Gradients of several partitions at one point, concatenated in `batches` order, each the
// mean over its own batch. `loss` is the first (the own) partition's.
GradientStep compute_partition_gradients(learning::Model& model, const learning::Dataset& data,
                                         const std::vector<std::vector<std::int64_t>>& batches,
                                         std::span<const float> params);

// Score validation (consensus::StartValidation): the positions in [0, own_size) of the
// `batch` samples of the own shard scored at iteration k, drawn with replacement from a
// stream of their own (`seed`: PeerSamples::validation_seed), so validating changes no
// training batch. Both runtimes draw them here.
std::vector<std::int64_t> validation_positions(std::int64_t own_size, std::uint64_t seed,
                                               std::int64_t k, int batch);

// The mean loss (without the L2 term) of each of request.models on `rows` of `data`, in the
// request's order: a forward pass per model. NaN for a model whose size is not the model's.
std::vector<double> validation_losses(learning::Model& model, const learning::Dataset& data,
                                      std::span<const std::int64_t> rows,
                                      const consensus::StartValidation& request);

}  // namespace fastk::node::training
