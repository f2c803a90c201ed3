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

 private:
  PolicySpec spec_;
  std::deque<GradientStats> gradients_;  // valid ones only, newest last
  double disagreement_ = kNotEstimated;
  int previous_m_ = -1;
};

}  // namespace fastk::consensus
