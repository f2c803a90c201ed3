// Compressed gossip (CHOCO-SGD, docs/compression.md): the peer sends the compressed
// difference between its stepped model and its public estimate instead of the model, keeps a
// copy of each neighbour's estimate built from the differences it sent, and mixes the
// estimates with the consensus step gamma: x(k+1) = y + gamma sum_j w_ij (x_hat_j - x_hat_i).
// With error reset (compression/error_reset.h) every reset_every-th gossip sends its
// difference with the reset's compressor and mixes with the reset's gamma.
// Needs adapt_then_combine, a static undirected graph and symmetric weights.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compression/public_estimate.h"
#include "consensus/mix_step.h"
#include "consensus/mixing_variant.h"
#include "consensus/variants/plain_gossip.h"

namespace fastk::consensus {

// Why compressed gossip cannot run on `schedule` (a time-varying or directed graph, or
// W_ij != W_ji for some pair; with `peer`, only the pairs of that peer), or nullopt if it can.
// The variant refuses such a schedule; the config checks it first, to name it among the
// config's errors.
std::optional<std::string> unfit_for_compressed_gossip(const topology::TopologySchedule& schedule,
                                                       std::optional<PeerId> peer = std::nullopt);

class CompressedGossip final : public PlainGossip {
 public:
  explicit CompressedGossip(IterationCore& core);

  // This peer's copy of `peer`'s public estimate (its own for itself), with the differences
  // applied so far; empty for a non-neighbour.
  std::span<const float> public_estimate(PeerId peer) const;

  // It steps first (adapt-then-combine), then sends its difference instead of its model.
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override;
  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override;
  using PlainGossip::take;
  bool take(double now_s, const DifferenceArrived& m, Actions& out) override;

 private:
  void check() const;
  // Error reset ([compression] reset_every): whether this gossip resets, and the consensus
  // step it mixes with (the reset's on a reset gossip).
  bool resets() const;
  double consensus_step() const;
  // The mix of the estimates, as terms of mix_and_step, after applying the differences of
  // iterations up to k.
  std::vector<MixTerm> estimate_terms(double now_s);
  // A gap in a neighbour's differences parts this peer's copy of its estimate from every
  // other for good.
  void part_from(Slot& slot);

  compression::PublicEstimate own_estimate_;
  std::vector<compression::PublicEstimate> estimates_;  // per slot: each neighbour's
  // Per slot: differences received and not applied yet (tag order; applied at the update of
  // their iteration, so that full mixes exactly iteration k's estimates), and the tag of the
  // last one received.
  std::vector<std::deque<std::pair<std::int64_t, CompressedPart>>> differences_;
  std::vector<std::int64_t> difference_tag_;
  std::vector<float> scratch_;
  Params own_;
};

}  // namespace fastk::consensus
