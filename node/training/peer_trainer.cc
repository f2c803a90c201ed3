#include "node/training/peer_trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>

namespace fastk::node::training {

void check_optimizer(const learning::OptimizerSpec& o) {
  if (o.momentum != 0 || o.schedule != learning::ScheduleKind::kConstant || o.weight_decay != 0) {
    throw std::invalid_argument(
        "decentralized runs (fastk sim, node, run) apply the protocol's plain SGD step with a "
        "constant learning rate: optimizer.momentum, optimizer.schedule and "
        "optimizer.weight_decay must keep their defaults (0, \"constant\", 0)");
  }
  if (!(o.lr > 0)) throw std::invalid_argument("optimizer.lr must be > 0");
}

std::uint64_t peer_seed(std::uint64_t seed, int peer) {
  std::uint64_t x = seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(peer + 1);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

learning::Partition partition_training_set(std::span<const std::int32_t> labels, int classes,
                                           std::int64_t samples, const learning::DataSpec& spec,
                                           int peers) {
  learning::Partition partition =
      learning::make_partition(labels, classes, samples, peers, spec.partition, spec.seed);
  for (int i = 0; i < peers; ++i) {
    if (partition.peer_indices[static_cast<std::size_t>(i)].empty()) {
      throw std::invalid_argument("peer " + std::to_string(i) +
                                  " got no training samples from the partition (data.partition)");
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
  return coding::place_frc(adjacency, spec.stragglers, spec.dynamic_roles);
}

PeerTrainer::PeerTrainer(const learning::DataSpec& data, const learning::ModelSpec& model,
                         const learning::OptimizerSpec& optimizer, int peers, int peer,
                         std::vector<int> stored)
    : batch_size_(optimizer.batch_size) {
  check_optimizer(optimizer);
  std::vector<std::int64_t> own;
  // Rows kept: the own shard first, then each other stored partition; where each starts.
  std::vector<std::pair<int, std::size_t>> others;
  std::vector<std::vector<std::int64_t>> other_rows;
  learning::TrainTest mine = learning::load_data_rows(
      data, [&](std::span<const std::int32_t> labels, int classes, std::int64_t samples) {
        learning::Partition all = partition_training_set(labels, classes, samples, data, peers);
        own = all.peer_indices.at(static_cast<std::size_t>(peer));
        std::vector<std::int64_t> rows = own;
        for (int r : stored) {
          if (r == peer) continue;
          const auto& theirs = all.peer_indices.at(static_cast<std::size_t>(r));
          others.emplace_back(r, rows.size());
          other_rows.push_back(theirs);
          rows.insert(rows.end(), theirs.begin(), theirs.end());
        }
        return rows;
      });
  shard_ = std::move(mine.train);
  test_ = std::move(mine.test);
  model_ = learning::make_model(model, shard_);
  // The sampler walks positions in the shard; it draws the same positions as the
  // simulator's sampler over this peer's global indices (its shuffle depends only on the
  // count and the seed), so both runtimes see the same samples in the same order.
  std::vector<std::int64_t> positions(own.size());
  std::iota(positions.begin(), positions.end(), 0);
  sampler_ = std::make_unique<learning::BatchSampler>(std::move(positions), optimizer.batch_size,
                                                      peer_seed(optimizer.seed, peer));
  if (!stored.empty()) {
    // Positions of each partition inside the kept rows; shuffles depend only on the count
    // and the seed, so these draw the simulator's samples in the simulator's order.
    auto positions_from = [](std::size_t first, std::size_t count) {
      std::vector<std::int64_t> range(count);
      std::iota(range.begin(), range.end(), static_cast<std::int64_t>(first));
      return range;
    };
    partition_samplers_.emplace(peer,
                                learning::BatchSampler(positions_from(0, own.size()), batch_size_,
                                                       peer_seed(optimizer.seed, peer)));
    for (std::size_t o = 0; o < others.size(); ++o) {
      partition_samplers_.emplace(
          others[o].first,
          learning::BatchSampler(positions_from(others[o].second, other_rows[o].size()),
                                 batch_size_, peer_seed(optimizer.seed, others[o].first)));
    }
  }
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
  const auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(plain), median(with_noise)};
}

learning::Evaluation PeerTrainer::evaluate(std::span<const float> params, std::int64_t limit) {
  if (limit <= 0 || limit >= test_.size()) return eval_model_->evaluate(params, test_);
  if (test_head_.size() != limit) {
    std::vector<std::int64_t> head(static_cast<std::size_t>(limit));
    std::iota(head.begin(), head.end(), 0);
    test_head_ = learning::select_rows(test_, head);
  }
  return eval_model_->evaluate(params, test_head_);
}

}  // namespace fastk::node::training
