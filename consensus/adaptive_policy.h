// DBW-C (docs/protocol.md §5.5): choose the awaited count that maximises estimated progress
// per unit time. The rule and its parameters are documented in backup_policy.h.
#pragma once

#include <deque>

#include "consensus/backup_policy.h"

namespace fastk::consensus {

class AdaptivePolicy final : public BackupPolicy {
 public:
  // Throws std::invalid_argument for out-of-range parameters.
  explicit AdaptivePolicy(const PolicySpec& spec);
  PolicyKind kind() const override { return PolicyKind::kAdaptive; }
  Decision decide(const PolicyInput& in) override;
  void observe_gradient(const GradientStats& stats) override;
  bool wants_disagreement() const override { return true; }
  void observe_disagreement(double nu2) override;
  // The decision expected the iteration to take T(m): an awaited neighbour later than that
  // (or than the own gradient, if that took longer) is straggling by the rule's own
  // estimate, and the peer goes with the fresh ones it has (at least m_min).
  std::optional<double> relax_at(double start_s, double gradient_done_s) const override;

 private:
  struct Candidate {
    int m = 0;
    double progress = 0;  // P(m)
    double time_s = 0;    // T(m)
  };
  Candidate choose(const PolicyInput& in, const EstimatorValues& est) const;

  PolicySpec spec_;
  std::deque<GradientStats> gradients_;  // valid ones only, newest last
  double disagreement_ = kNotEstimated;
  double expected_time_s_ = kNotEstimated;  // T(m) of the last decision
};

}  // namespace fastk::consensus
