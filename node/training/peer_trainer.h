// Everything one peer trains with, set up the same way in every runtime: the data
// partition, the peer's mini-batch sampler seed, the model and its initial parameters. The
// simulator and real peers both use these functions, so a run of `fastk sim` and of real
// peers with the same config and seed sample the same batches from the same start.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "coding/neighbourhood_code.h"
#include "consensus/actions.h"
#include "consensus/protocol_config.h"
#include "learning/data_sources.h"
#include "learning/model.h"
#include "learning/partition.h"
#include "learning/peer_data.h"
#include "learning/sampler.h"
#include "learning/specs.h"
#include "node/training/gradient_step.h"
#include "topology/graph.h"

namespace fastk::node::training {

// Checks [optimizer] before any peer starts (the protocol applies it: docs/protocol.md §3.7);
// throws std::invalid_argument naming the key that is out of range.
void check_optimizer(const learning::OptimizerSpec& optimizer);

// The model every runtime trains for a config (real peers, fastk sim, fastk train): the
// [model] that fits `train`'s shape and classes, with [data] augment applied to its training
// batches (learning/augmented_model.h). Throws std::invalid_argument when the model does not
// fit the data or the augmentation does not fit the samples.
std::unique_ptr<learning::Model> make_training_model(const learning::ModelSpec& model,
                                                     const learning::DataSpec& data,
                                                     const learning::Dataset& train);

// Independent sampling stream of `peer` derived from the optimizer seed (splitmix64).
std::uint64_t peer_seed(std::uint64_t seed, int peer);

// The partition of a training set (its labels, classes and size) over `peers`; throws
// std::invalid_argument naming the peer if one gets no samples. With more peers than
// samples, peer i gets the indices of group i mod (samples / batch_size), a partition over
// that many groups (docs/simulation.md §7).
learning::Partition partition_training_set(std::span<const std::int32_t> labels, int classes,
                                           std::int64_t samples, const learning::DataSpec& spec,
                                           int peers, int batch_size);
// Whether peers share their samples (more peers than samples).
inline bool peers_share_samples(int peers, std::int64_t samples) { return peers > samples; }

// What an [attack] kind = "label_flip" attacker trains on (consensus/attack.h): the label y
// of each of `rows` of `data` becomes classes - 1 - y. Throws std::invalid_argument for
// regression data (no labels to flip).
void flip_labels(learning::Dataset& data, std::span<const std::int64_t> rows);

// Whether `peer` trains on flipped labels under `protocol`'s [attack].
bool flips_labels(const consensus::ProtocolConfig& protocol, int peer);

// Where a coded run puts its data (coding/neighbourhood_code.h) on this graph.
coding::Placement coded_placement(const topology::Graph& graph,
                                  const coding::NeighbourhoodCodeSpec& spec);

// A real peer's training state: its own shard only (the rest of the training set is freed
// once the shard is cut), a sampler over it, the model and the test set. In a coded run it
// also holds the `stored` partitions (other peers' shards, by peer id), each with a sampler
// seeded like that peer's own, as the simulator does.
class PeerTrainer {
 public:
  // `flip_labels`: the peer is an [attack] kind = "label_flip" attacker (poisoned_labels).
  PeerTrainer(const learning::DataSpec& data, const learning::ModelSpec& model,
              const learning::OptimizerSpec& optimizer, int peers, int peer,
              std::vector<int> stored = {}, bool flip_labels = false);

  std::size_t num_parameters() const { return model_->num_parameters(); }
  const std::vector<float>& initial() const { return initial_; }
  std::int64_t shard_size() const { return shard_.size(); }
  // Next mini-batch gradient at `params`, written into `buffer` (see compute_gradient), with
  // its GradientStats when `stats`. Not thread-safe: one caller (the compute thread).
  GradientStep gradient(std::span<const float> params, bool stats = false,
                        std::vector<float> buffer = {});
  // What a StartGradient asks for: the own gradient (into `buffer`, with GradientStats if
  // asked), or one per listed (stored) partition.
  GradientStep gradient(const consensus::StartGradient& request, std::vector<float> buffer = {});
  // The losses a StartValidation asks for, on the own shard's validation batch of its
  // iteration (validation_positions). Not thread-safe: one caller (the compute thread).
  std::vector<double> losses(const consensus::StartValidation& request);
  // Median time of one sample's forward pass and loss (MachineCosts::loss_cpu_s_per_sample),
  // over a validation batch of `batch` samples, `repeats` (>= 1) times after a warm-up.
  double time_loss_per_sample_s(int batch, int repeats);
  // Median times of one plain gradient and of one with the adaptive policy's noise
  // estimate, on a fixed batch of the shard, `repeats` (>= 1) of each, interleaved, after a
  // warm-up. Draws no batch from the sampler, so the run's batches are unchanged.
  struct GradientTimes {
    double plain_s = 0;
    double with_noise_s = 0;
  };
  GradientTimes time_gradients(int repeats);
  // The plain gradient's time, what injected slowdowns multiply (without the adaptive
  // policy's noise estimate: a slowdown means the same whatever the policy).
  double time_gradient_s(int repeats) { return time_gradients(repeats).plain_s; }
  // Loss and accuracy on the test set (its first `limit` samples when limit > 0), with a
  // model instance of its own (so it may run on another thread than gradient()).
  learning::Evaluation evaluate(std::span<const float> params, std::int64_t limit = 0);
  // Where every sampler is (a checkpoint's): the own one under kOwnSampler, a coded peer's
  // stored partitions under their peer ids. Not while a gradient is being computed.
  static constexpr int kOwnSampler = -1;
  std::map<int, learning::SamplerState> sampler_states() const;
  // Continues each sampler from its saved state; throws std::invalid_argument when the set
  // of samplers or a state does not fit this trainer (a checkpoint of another config).
  void restore_samplers(std::map<int, learning::SamplerState> states);

 private:
  learning::Dataset shard_;
  std::unique_ptr<learning::TestSet> test_;
  learning::Dataset test_head_;  // the first samples of the test set, for quick checks
  std::unique_ptr<learning::Model> model_;
  std::unique_ptr<learning::Model> eval_model_;
  std::vector<float> initial_;
  std::unique_ptr<learning::BatchSampler> sampler_;
  int batch_size_ = 1;
  std::uint64_t validation_seed_ = 0;
  std::int64_t own_size_ = 0;
  std::map<int, learning::BatchSampler> partition_samplers_;  // coded: by partition (peer id)
};

}  // namespace fastk::node::training
