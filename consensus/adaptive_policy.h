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
  bool wants_gradient_stats(std::int64_t k) const override {
    return k % spec_.gradient_stats_every == 0;
  }
  bool costly_decision() const override { return true; }
  void observe_disagreement(double nu2) override;
  // The wait is re-judged with what it has learnt by then: once the own gradient is done,
  // the peer goes with the fresh neighbours it has (at least m_min) from the first elapsed
  // time e at which going beats waiting on, by the window's m-th arrivals later than e:
  // P(m_min) / e >= P(m) / mean{A_(m)(k') : A_(m)(k') > e} (docs/protocol.md §5.5.6).
  // nullopt when the rule did not decide or decided m = m_min.
  std::optional<double> relax_at(double start_s, double gradient_done_s) const override;

 private:
  struct Candidate {
    int m = 0;
    double progress = 0;             // P(m)
    double time_s = 0;               // T(m)
    std::vector<double> arrivals_s;  // the window's A_(m)(k'), ascending (for relax_at)
    double floor_progress = 0;       // P(m_min)
    int m_min = 0;
  };
  Candidate choose(const PolicyInput& in, const EstimatorValues& est) const;

  PolicySpec spec_;
  std::deque<GradientStats> gradients_;  // valid ones only, newest last
  double disagreement_ = kNotEstimated;
  std::optional<Candidate> decided_;  // the rule's last decision (none in warm-up)
};

}  // namespace fastk::consensus
