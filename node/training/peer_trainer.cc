#include "node/training/peer_trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "learning/augmented_model.h"
#include "learning/random.h"
#include "node/training/peer_samples.h"

namespace fastk::node::training {

void check_optimizer(const learning::OptimizerSpec& o) {
  if (!(o.lr > 0)) throw std::invalid_argument("optimizer.lr must be > 0");
  if (!(o.momentum >= 0 && o.momentum < 1)) {
    throw std::invalid_argument("optimizer.momentum must be in [0, 1)");
  }
  if (o.warmup_iterations < 0) {
    throw std::invalid_argument("optimizer.warmup_iterations must be >= 0");
  }
}

std::unique_ptr<learning::Model> make_training_model(const learning::ModelSpec& model,
                                                     const learning::DataSpec& data,
                                                     const learning::Dataset& train) {
  return learning::with_augmentation(learning::make_model(model, train), data, train.shape);
}

std::uint64_t peer_seed(std::uint64_t seed, int peer) {
  return learning::mix64(seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(peer));
}

learning::Partition partition_training_set(std::span<const std::int32_t> labels, int classes,
                                           std::int64_t samples, const learning::DataSpec& spec,
                                           int peers, int batch_size) {
  // More peers than samples (100,000 simulated peers on Fashion-MNIST's 60,000): the
  // partition is made for as many groups as can each fill a batch, and peer i trains on group
  // i mod groups; group-mates draw from the same rows of the one data set in memory.
  const bool shared = peers_share_samples(peers, samples);
  const int groups =
      shared ? static_cast<int>(std::max<std::int64_t>(1, samples / std::max(1, batch_size)))
             : peers;
  learning::Partition partition =
      learning::make_partition(labels, classes, samples, groups, spec.partition, spec.seed);
  for (int i = 0; i < groups; ++i) {
    if (!partition.peer_indices[static_cast<std::size_t>(i)].empty()) continue;
    if (!shared) {
      throw std::invalid_argument("peer " + std::to_string(i) +
                                  " got no training samples from the partition (data.partition)");
    }
    throw std::invalid_argument(
        "group " + std::to_string(i) + " of " + std::to_string(groups) +
        " got no training samples from the partition (data.partition): " + std::to_string(peers) +
        " peers share " + std::to_string(samples) +
        " samples in groups of a batch each; an iid partition or a larger batch fills every "
        "group");
  }
  if (shared) {
    partition.peer_indices.resize(static_cast<std::size_t>(peers));
    for (int i = groups; i < peers; ++i) {
      partition.peer_indices[static_cast<std::size_t>(i)] =
          partition.peer_indices[static_cast<std::size_t>(i % groups)];
    }
  }
  return partition;
}

coding::Placement coded_placement(const topology::Graph& graph,
                                  const coding::NeighbourhoodCodeSpec& spec) {
  std::vector<std::vector<int>> adjacency;
  for (int i = 0; i < graph.size(); ++i) {
    const auto neighbours = graph.neighbors(i);
    adjacency.emplace_back(neighbours.begin(), neighbours.end());
  }
  return coding::place_code(adjacency, spec);
}

void flip_labels(learning::Dataset& data, std::span<const std::int64_t> rows) {
  if (data.classes == 0) {
    throw std::invalid_argument(
        "[attack] kind = \"label_flip\" needs a classification data "
        "set; " +
        data.name + " has no labels");
  }
  for (const std::int64_t row : rows) {
    auto& label = data.labels[static_cast<std::size_t>(row)];
    label = data.classes - 1 - label;
  }
}

bool flips_labels(const consensus::ProtocolConfig& protocol, int peer) {
  return protocol.attack && protocol.attack->kind == consensus::AttackKind::kLabelFlip &&
         protocol.attack->attacker(peer);
}

PeerTrainer::PeerTrainer(const learning::DataSpec& data, const learning::ModelSpec& model,
                         const learning::OptimizerSpec& optimizer, int peers, int peer,
                         std::vector<int> stored, bool flip)
    : batch_size_(optimizer.batch_size) {
  check_optimizer(optimizer);
  // The rows this peer holds and its samplers: peer_samples, which the simulator uses too.
  std::optional<PeerSamples> samples;
  learning::PeerData mine = learning::load_peer_data(
      data, [&](std::span<const std::int32_t> labels, int classes, std::int64_t count) {
        const learning::Partition all =
            partition_training_set(labels, classes, count, data, peers, optimizer.batch_size);
        samples = peer_samples(all, peer, stored, optimizer.batch_size, optimizer.seed);
        return samples->rows;
      });
  if (!samples) throw std::logic_error("PeerTrainer: the data loader chose no rows");
  shard_ = std::move(mine.train);
  if (flip) {
    std::vector<std::int64_t> every_row(static_cast<std::size_t>(shard_.size()));
    std::iota(every_row.begin(), every_row.end(), std::int64_t{0});
    flip_labels(shard_, every_row);
  }
  test_ = std::make_unique<learning::TestSet>(std::move(mine.test));
  model_ = make_training_model(model, data, shard_);
  // Positions into the kept rows are the shard's own indices: no mapping needed.
  sampler_ = std::make_unique<learning::BatchSampler>(std::move(samples->own));
  partition_samplers_ = std::move(samples->partitions);
  validation_seed_ = samples->validation_seed;
  own_size_ = samples->own_size;
  eval_model_ = model_->clone();
  initial_.resize(model_->num_parameters());
  model_->initialize(initial_, model.init_seed);
}

GradientStep PeerTrainer::gradient(std::span<const float> params, bool stats,
                                   std::vector<float> buffer) {
  return compute_gradient(*model_, shard_, sampler_->next(), params, stats, std::move(buffer));
}

GradientStep PeerTrainer::gradient(const consensus::StartGradient& request,
                                   std::vector<float> buffer) {
  if (request.partitions.empty()) {
    return gradient(request.params->values(), request.gradient_stats, std::move(buffer));
  }
  const auto batches =
      draw_partition_batches(request, batch_size_, [&](int r) -> learning::BatchSampler& {
        const auto it = partition_samplers_.find(r);
        if (it == partition_samplers_.end()) {
          throw std::logic_error("peer asked for the gradient of partition " + std::to_string(r) +
                                 ", which it does not store");
        }
        return it->second;
      });
  return compute_partition_gradients(*model_, shard_, batches, request.params->values());
}

namespace {

double median_of(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<double> PeerTrainer::losses(const consensus::StartValidation& request) {
  // The own shard is rows [0, own_size_) of shard_ (a coded peer's stored partitions follow).
  const auto rows =
      validation_positions(own_size_, validation_seed_, request.iteration, request.batch);
  return validation_losses(*model_, shard_, rows, request);
}

double PeerTrainer::time_loss_per_sample_s(int batch, int repeats) {
  const consensus::StartValidation request{0, {consensus::make_params(initial_)}, batch};
  const auto rows = validation_positions(own_size_, validation_seed_, 0, batch);
  validation_losses(*model_, shard_, rows, request);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = std::chrono::steady_clock::now();
    validation_losses(*model_, shard_, rows, request);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median_of(times) / batch;
}

PeerTrainer::GradientTimes PeerTrainer::time_gradients(int repeats) {
  std::vector<std::int64_t> batch(
      static_cast<std::size_t>(std::min<std::int64_t>(batch_size_, shard_.size())));
  std::iota(batch.begin(), batch.end(), 0);
  std::vector<float> buffer(model_->num_parameters());
  std::vector<double> plain, with_noise;
  for (int r = -3; r < std::max(1, repeats); ++r) {  // three warm-up rounds
    // In turns, each first every other round: the second runs on warmer caches.
    for (const bool noise : {r % 2 != 0, r % 2 == 0}) {
      const auto start = std::chrono::steady_clock::now();
      GradientStep step =
          compute_gradient(*model_, shard_, batch, initial_, noise, std::move(buffer));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      buffer = std::move(step.result.gradient);
      if (r >= 0) (noise ? with_noise : plain).push_back(seconds);
    }
  }
  return {median_of(plain), median_of(with_noise)};
}

learning::Evaluation PeerTrainer::evaluate(std::span<const float> params, std::int64_t limit) {
  const learning::Dataset& test = test_->get();  // made on first use (peer_data.h)
  if (limit <= 0 || limit >= test.size()) return eval_model_->evaluate(params, test);
  if (test_head_.size() != limit) {
    std::vector<std::int64_t> head(static_cast<std::size_t>(limit));
    std::iota(head.begin(), head.end(), 0);
    test_head_ = learning::select_rows(test, head);
  }
  return eval_model_->evaluate(params, test_head_);
}

std::map<int, learning::SamplerState> PeerTrainer::sampler_states() const {
  std::map<int, learning::SamplerState> states;
  states[kOwnSampler] = sampler_->state();
  for (const auto& [partition, sampler] : partition_samplers_) states[partition] = sampler.state();
  return states;
}

void PeerTrainer::restore_samplers(std::map<int, learning::SamplerState> states) {
  if (states.size() != partition_samplers_.size() + 1 || !states.count(kOwnSampler)) {
    throw std::invalid_argument("the saved sampler states (" + std::to_string(states.size()) +
                                ") do not match this peer's samplers (" +
                                std::to_string(partition_samplers_.size() + 1) + ")");
  }
  for (auto& [partition, state] : states) {
    if (partition == kOwnSampler) continue;
    const auto it = partition_samplers_.find(partition);
    if (it == partition_samplers_.end()) {
      throw std::invalid_argument("a saved sampler of partition " + std::to_string(partition) +
                                  ", which this peer does not store");
    }
    it->second.restore(std::move(state));
  }
  sampler_->restore(std::move(states.at(kOwnSampler)));
}

}  // namespace fastk::node::training
