#include "consensus/adaptive_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fastk::consensus {
namespace {

// The first elapsed time e >= own_s (the own gradient is done) at which waiting on stops
// paying: no m-th arrival of the window (`sorted_s`, ascending) came later than e, or those
// that did came on average at least `ratio` * e (the progress of waiting over that of going
// now). The own gradient being done, the iteration ends with the arrival. For e between two
// arrivals the tail is the same and mean / e falls with e, so only own_s and the arrivals
// beyond it are candidates.
double worth_waiting_until(const std::vector<double>& sorted_s, double own_s, double ratio) {
  double tail_sum = 0;  // of sorted_s[i..]
  for (double t : sorted_s) tail_sum += t;
  std::size_t i = 0;
  double e = own_s;
  while (true) {
    while (i < sorted_s.size() && sorted_s[i] <= e) tail_sum -= sorted_s[i++];
    const std::size_t later = sorted_s.size() - i;
    if (later == 0) return e;
    if (e > 0 && tail_sum / static_cast<double>(later) >= ratio * e) return e;
    e = sorted_s[i];
  }
}

}  // namespace

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
  if (spec.gradient_stats_every < 1) {
    throw std::invalid_argument("adaptive policy: gradient_stats_every must be >= 1");
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
  // A model that overflowed the disagreement's float sum says nothing about the neighbours'
  // spread, and would hold the average at infinity for good.
  if (!std::isfinite(nu2)) return;
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
  decided_.reset();
  // (m_min above d breaks PolicyInput's contract; waiting for everyone is the safe answer.)
  if (warming_up || !has_timing || gradients_.empty() || in.neighbours == 0 ||
      in.m_min > in.neighbours) {
    return decision;
  }
  decided_ = choose(in, est);
  decision.awaited = decided_->m;
  est.expected_time_s = decided_->time_s;
  est.progress_rate =
      decided_->progress > 0 ? decided_->progress / decided_->time_s : kNotEstimated;
  return decision;
}

AdaptivePolicy::Candidate AdaptivePolicy::choose(const PolicyInput& in,
                                                 const EstimatorValues& est) const {
  const double eta = in.learning_rate;
  const double L = spec_.smoothness;
  const double nu2 = std::isnan(disagreement_) ? 0.0 : disagreement_;
  const double gain = eta * (1 - L * eta / 2) * est.gradient_norm2;
  std::vector<Candidate> candidates;
  candidates.reserve(static_cast<std::size_t>(in.neighbours - in.m_min + 1));
  std::optional<std::size_t> best_rate, fastest;
  for (int m = in.m_min; m <= in.neighbours; ++m) {
    Candidate& c = candidates.emplace_back();
    c.m = m;
    c.m_min = in.m_min;
    c.progress = gain - (L * eta * eta / 2) * est.gradient_variance / (m + 1) -
                 (eta * L * L / 2) * nu2 / (m + 1);
    c.floor_progress = candidates.front().progress;
    const auto waits = in.arrivals->waits(m, in.iteration, in.now_s);  // not empty: has_timing
    for (const ArrivalWindow::Wait& w : waits) c.arrivals_s.push_back(w.arrival_s);
    c.time_s = std::max(ArrivalWindow::mean_iteration_s(waits), 1e-12);
    const std::size_t i = candidates.size() - 1;
    // Ties (relative 1e-9) go to the larger m: m ascends, so >= with tolerance.
    if (c.progress > 0 &&
        (!best_rate || c.progress / c.time_s >= candidates[*best_rate].progress /
                                                    candidates[*best_rate].time_s * (1 - 1e-9))) {
      best_rate = i;
    }
    if (!fastest || c.time_s <= candidates[*fastest].time_s * (1 + 1e-9)) fastest = i;
  }
  // With no m making progress by the estimates (the gradient is lost in the noise, or the
  // models disagree), waiting for more buys nothing measurable: save the time.
  Candidate chosen = std::move(candidates[best_rate ? *best_rate : *fastest]);
  std::sort(chosen.arrivals_s.begin(), chosen.arrivals_s.end());
  return chosen;
}

std::optional<double> AdaptivePolicy::relax_at(double start_s, double gradient_done_s) const {
  if (!decided_ || decided_->m <= decided_->m_min) return std::nullopt;
  const double own_s = gradient_done_s - start_s;
  // Without progress by the estimates for m, waiting buys nothing; without progress for
  // m_min, going early buys nothing (then wait until the latest m-th arrival of the window).
  if (!(decided_->progress > 0)) return gradient_done_s;
  const double ratio = decided_->floor_progress > 0 ? decided_->progress / decided_->floor_progress
                                                    : std::numeric_limits<double>::infinity();
  return start_s + worth_waiting_until(decided_->arrivals_s, own_s, ratio);
}

}  // namespace fastk::consensus
