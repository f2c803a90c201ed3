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
  if (warming_up || !has_timing || gradients_.empty() || in.neighbours == 0) {
    previous_m_ = decision.awaited;
    return decision;
  }
  const double eta = in.learning_rate;
  const double L = spec_.smoothness;
  const double nu2 = std::isnan(disagreement_) ? 0.0 : disagreement_;
  const double gain = eta * (1 - L * eta / 2) * est.gradient_norm2;
  int best_m = -1;
  double best_rate = 0;
  double best_time = 0;
  bool any_positive = false;
  for (int m = in.m_min; m <= in.neighbours; ++m) {
    const double progress = gain - (L * eta * eta / 2) * est.gradient_variance / (m + 1) -
                            (eta * L * L / 2) * nu2 / (m + 1);
    const double time_s =
        std::max(*in.arrivals->expected_iteration_time(m, in.iteration, in.now_s), 1e-12);
    if (progress <= 0) continue;
    any_positive = true;
    const double rate = progress / time_s;
    // Ties (relative 1e-9) go to the larger m: m ascends, so >= with tolerance.
    if (best_m < 0 || rate >= best_rate * (1 - 1e-9)) {
      best_m = m;
      best_rate = std::max(best_rate, rate);
      best_time = time_s;
    }
  }
  if (!any_positive) {
    const int previous = previous_m_ < 0 ? in.neighbours : previous_m_;
    decision.awaited = std::clamp(previous + 1, in.m_min, in.neighbours);
  } else {
    decision.awaited = best_m;
    est.expected_time_s = best_time;
    est.progress_rate = best_rate;
  }
  previous_m_ = decision.awaited;
  return decision;
}

}  // namespace fastk::consensus
