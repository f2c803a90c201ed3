#include "consensus/variants/plain_gossip.h"

#include <algorithm>
#include <utility>

#include "consensus/disagreement.h"

namespace fastk::consensus {

void PlainGossip::begin(double now_s, Actions& out) {
  core_.begin_round(now_s);
  core_.decide(now_s);
  const auto& send_to = core_.round().send_to;
  if (combine_first() && !send_to.empty()) core_.send(send_to, core_.x(), out);
  core_.set_gradient_point(core_.x());
  out.push_back(StartGradient{
      core_.k(), core_.x(), {}, true, 1.0, core_.policy().wants_gradient_stats(core_.k())});
}

std::vector<float> PlainGossip::gradient_done(double now_s, std::vector<float> gradient,
                                              const GradientStats& stats, Actions& out) {
  observe_gradient(core_, stats, now_s);
  if (combine_first()) {  // kept until the update; the last one's vector goes back
    std::swap(gradient_, gradient);
    own_ = core_.x();
    return gradient;
  }
  own_ = adapt(core_, gradient, gradient_);
  if (!core_.round().send_to.empty()) core_.send(core_.round().send_to, own_, out);
  return gradient;
}

std::vector<float> PlainGossip::release_gradient() {
  return combine_first() ? std::exchange(gradient_, {}) : std::vector<float>{};
}

std::span<const float> PlainGossip::step() {
  if (!combine_first()) return {};
  if (core_.has_local_step()) core_.to_direction(gradient_);
  return gradient_;
}

std::vector<std::span<const float>> PlainGossip::used_models(const UpdatePlan& plan,
                                                             IterationRecord& record) const {
  std::vector<std::span<const float>> models;
  for (int u : plan.used) {
    const auto r = static_cast<std::size_t>(u);
    const Slot& slot = core_.slot(core_.round_slots()[r]);
    models.push_back(core_.mixed(slot)->values());
    record.used.push_back(core_.round().receive_from[r]);
    record.used_tags.push_back(core_.mixed_tag(slot));
  }
  return models;
}

void PlainGossip::observe_disagreement(const UpdatePlan& plan,
                                       std::vector<std::span<const float>> models,
                                       std::size_t leave_out) {
  if (!disagreement_due(core_, plan.used)) return;
  if (leave_out > 0) {
    std::vector<std::pair<double, std::size_t>> by_distance;
    for (std::size_t m = 0; m < models.size(); ++m) {
      by_distance.emplace_back(distance_between(own(), models[m]), m);
    }
    std::sort(by_distance.begin(), by_distance.end());
    by_distance.resize(by_distance.size() - std::min(leave_out, by_distance.size()));
    std::vector<std::span<const float>> kept;
    for (const auto& [distance, m] : by_distance) kept.push_back(models[m]);
    models = std::move(kept);
  }
  // Every model left out: nothing measured (a 0 would pull the average down).
  if (models.empty()) return;
  core_.policy().observe_disagreement(neighbourhood_disagreement(own(), models));
}

}  // namespace fastk::consensus
