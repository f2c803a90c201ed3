#include "consensus/adaptive_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fastk::consensus {

AdaptivePolicy::AdaptivePolicy(const PolicySpec& spec) : spec_(spec) {
  if (spec.window < 1) throw std::invalid_argument("adaptive policy: window must be >= 1");
  if (spec.gradient_window < 1) {
    throw std::invalid_argument("adaptive policy: gradient_window must be >= 1");
  }
  if (spec.warmup < 0) throw std::invalid_argument("adaptive policy: warmup must be >= 0");
  if (!(spec.smoothness > 0))
    throw std::invalid_argument("adaptive policy: smoothness must be > 0");
  if (spec.disagreement_every < 1) {
    throw std::invalid_argument("adaptive policy: disagreement_every must be >= 1");
  }
  if (spec.disagreement_ema < 0 || spec.disagreement_ema >= 1) {
    throw std::invalid_argument("adaptive policy: disagreement_ema must be in [0, 1)");
  }
}

void AdaptivePolicy::observe_gradient(const GradientStats& stats) {
  if (!stats.valid) return;
  gradients_.push_back(stats);
  while (static_cast<int>(gradients_.size()) > spec_.gradient_window) gradients_.pop_front();
}

void AdaptivePolicy::observe_disagreement(double nu2) {
  disagreement_ = std::isnan(disagreement_)
                      ? nu2
                      : spec_.disagreement_ema * disagreement_ + (1 - spec_.disagreement_ema) * nu2;
}

Decision AdaptivePolicy::decide(const PolicyInput& in) {
  Decision decision{in.neighbours, {}};
  auto& est = decision.estimates;
  const bool warming_up = in.iteration < spec_.warmup;
  const bool has_timing = in.arrivals != nullptr && in.arrivals->samples(in.iteration) > 0;
  if (!gradients_.empty()) {
    est.gradient_norm2 = 0;
    est.gradient_variance = 0;
    for (const auto& g : gradients_) {
      est.gradient_norm2 += g.squared_norm;
      est.gradient_variance += g.variance;
    }
    est.gradient_norm2 /= static_cast<double>(gradients_.size());
    est.gradient_variance /= static_cast<double>(gradients_.size());
  }
  est.disagreement = disagreement_;
  expected_time_s_ = kNotEstimated;
  if (warming_up || !has_timing || gradients_.empty() || in.neighbours == 0) return decision;
  const Candidate chosen = choose(in, est);
  decision.awaited = chosen.m;
  est.expected_time_s = chosen.time_s;
  est.progress_rate = chosen.progress > 0 ? chosen.progress / chosen.time_s : kNotEstimated;
  expected_time_s_ = chosen.time_s;
  return decision;
}

AdaptivePolicy::Candidate AdaptivePolicy::choose(const PolicyInput& in,
                                                 const EstimatorValues& est) const {
  const double eta = in.learning_rate;
  const double L = spec_.smoothness;
  const double nu2 = std::isnan(disagreement_) ? 0.0 : disagreement_;
  const double gain = eta * (1 - L * eta / 2) * est.gradient_norm2;
  std::optional<Candidate> best_rate, fastest;
  for (int m = in.m_min; m <= in.neighbours; ++m) {
    Candidate c;
    c.m = m;
    c.progress = gain - (L * eta * eta / 2) * est.gradient_variance / (m + 1) -
                 (eta * L * L / 2) * nu2 / (m + 1);
    c.time_s = std::max(*in.arrivals->expected_iteration_time(m, in.iteration, in.now_s), 1e-12);
    // Ties (relative 1e-9) go to the larger m: m ascends, so >= with tolerance.
    if (c.progress > 0 &&
        (!best_rate ||
         c.progress / c.time_s >= best_rate->progress / best_rate->time_s * (1 - 1e-9))) {
      best_rate = c;
    }
    if (!fastest || c.time_s <= fastest->time_s * (1 + 1e-9)) fastest = c;
  }
  // With no m making progress by the estimates (the gradient is lost in the noise, or the
  // models disagree), waiting for more buys nothing measurable: save the time.
  return best_rate ? *best_rate : *fastest;
}

std::optional<double> AdaptivePolicy::relax_at(double start_s, double gradient_done_s) const {
  if (std::isnan(expected_time_s_)) return std::nullopt;
  return start_s + std::max(expected_time_s_, gradient_done_s - start_s);
}

}  // namespace fastk::consensus
