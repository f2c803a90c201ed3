// Push-sum (stochastic gradient push, docs/protocol.md §4.4): the model carries a weight w
// (one more value, 1 at the start) mixed with the same column-stochastic weights; the
// gradient is taken at x / w, and every message's mass is added once, late or not. Needs a
// schedule of period 1; not with coding.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "consensus/mixing_variant.h"
#include "consensus/variants/plain_gossip.h"

namespace fastk::consensus {

// Plain gossip in what it takes and when it updates; it mixes masses and a weight.
class PushSum final : public PlainGossip {
 public:
  // Throws std::invalid_argument for a schedule that is not fixed or not column-stochastic.
  explicit PushSum(IterationCore& core);

  // This peer's weight w, and the weight of the messages received and not yet added (their
  // share for this peer). Over all peers and messages in flight they sum to the number of
  // peers.
  double weight() const { return static_cast<double>(core_.x()->values().back()); }
  double pending_weight() const;

  std::size_t models_kept_queued() const override { return 0; }  // each is mass
  Params debiased(const Params& x) const override;
  void begin(double now_s, Actions& out) override;
  std::size_t gradient_size() const override { return core_.parameters() - 1; }  // no w
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override;
  // The gradient is kept with one value more (the weight's 0): no use to the runtime.
  std::vector<float> release_gradient() override { return {}; }
  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override;
  // A repeated tag would add it twice: only newer ones come here.
  void took_model(int s, std::int64_t tag, const Params& params) override;
  // used_tags list every mass added, not one per neighbour: its newest tag.
  std::int64_t recorded_tag(int s, bool, std::int64_t) const override { return core_.slot(s).tag; }

 private:
  void check_weights() const;
  // The masses of tag <= k (all, for a backup policy), taken out of their slots, with their
  // weights; recorded as used in `record`.
  std::vector<std::pair<float, Params>> take_masses(IterationRecord& record);
  void observe_disagreement(std::span<const float> own,
                            const std::vector<std::span<const float>>& models);

  // Per slot: every model received and not yet added, oldest first (tags increase).
  std::vector<std::deque<std::pair<std::int64_t, Params>>> masses_;
  std::size_t max_masses_ = 8;   // kept per neighbour before the newest two are folded
  std::vector<float> padded_;    // the gradient with a 0 for the weight
  std::vector<float> gradient_;  // padded_, kept until the update, or scratch
  Params own_;
};

}  // namespace fastk::consensus
