#include "node/training/peer_trainer.h"

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

PeerTrainer::PeerTrainer(const learning::DataSpec& data, const learning::ModelSpec& model,
                         const learning::OptimizerSpec& optimizer, int peers, int peer,
                         int micro_batches)
    : micro_batches_(micro_batches) {
  check_optimizer(optimizer);
  std::vector<std::int64_t> own;
  learning::TrainTest mine = learning::load_data_rows(
      data, [&](std::span<const std::int32_t> labels, int classes, std::int64_t samples) {
        own = std::move(partition_training_set(labels, classes, samples, data, peers)
                            .peer_indices.at(static_cast<std::size_t>(peer)));
        return own;
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
  eval_model_ = model_->clone();
  initial_.resize(model_->num_parameters());
  model_->initialize(initial_, model.init_seed);
}

GradientStep PeerTrainer::gradient(std::span<const float> params, std::vector<float> buffer) {
  return compute_gradient(*model_, shard_, sampler_->next(), params, micro_batches_,
                          std::move(buffer));
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
