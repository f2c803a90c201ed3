#include "consensus/variants/push_sum.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "consensus/disagreement.h"
#include "consensus/mix_step.h"
#include "consensus/variants/shared_steps.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

// A push-sum peer that receives nothing (its in-neighbours finished or left) still gives its
// shares away: w shrinks geometrically and would underflow to 0, making x / w NaN. Before
// that, x and w are scaled by 2^64: exact, x / w unchanged. The weights then no longer sum
// to n, which no peer still mixing can notice.
void keep_weight_normal(std::span<float> next) {
  constexpr float kSmallest = 0x1p-100f, kScale = 0x1p64f;
  if (!(next.back() < kSmallest)) return;
  for (float& v : next) v *= kScale;
}

std::vector<float> debias(std::span<const float> x) {
  std::vector<float> z(x.begin(), x.end() - 1);
  for (float& v : z) v /= x.back();
  return z;
}

}  // namespace

PushSum::PushSum(IterationCore& core) : PlainGossip(core), masses_(core.slots().size()) {
  check_weights();
  // Under full a neighbour leads by at most the directed distance back to this peer (< n),
  // so n kept messages never need folding there.
  max_masses_ = std::max<std::size_t>(8, static_cast<std::size_t>(core_.schedule().size()));
  std::vector<float> with_weight(core_.x()->values().begin(), core_.x()->values().end());
  with_weight.push_back(1.0f);  // w(0) = 1
  core_.set_x(make_params(std::move(with_weight)));
}

void PushSum::check_weights() const {
  const topology::TopologySchedule& schedule = core_.schedule();
  if (schedule.period() != 1) {
    throw std::invalid_argument(
        "push_sum needs a fixed graph (a schedule of period 1): a message's share is the "
        "sender's weight for this peer, which a time-varying schedule changes every round");
  }
  // The mean is kept only if what this peer keeps and gives away sums to 1: its column of W.
  const PeerId self = core_.self();
  const topology::RoundPeers mine = schedule.round(self, 0);
  double column = mine.self_weight;
  for (PeerId i : mine.send_to) {
    const topology::RoundPeers theirs = schedule.round(i, 0);
    const auto at = std::find(theirs.receive_from.begin(), theirs.receive_from.end(), self);
    if (at != theirs.receive_from.end()) {
      column += theirs.receive_weights[static_cast<std::size_t>(at - theirs.receive_from.begin())];
    }
  }
  if (std::abs(column - 1.0) > 1e-6) {
    std::ostringstream message;
    message << "push_sum needs column-stochastic weights, but peer " << self
            << "'s column of W sums to " << column
            << " (weights = \"uniform\" on an irregular graph, or a weights file whose columns "
               "do not sum to 1): the models would not keep their mean";
    throw std::invalid_argument(message.str());
  }
}

Params PushSum::debiased(const Params& x) const { return make_params(debias(x->values())); }

// A neighbour's share of a message: its weight W_ij (fixed, the schedule has period 1).
double PushSum::pending_weight() const {
  double pending = 0;
  const topology::RoundPeers round = core_.schedule().round(core_.self(), 0);
  for (std::size_t r = 0; r < round.receive_from.size(); ++r) {
    for (const auto& [tag, mass] :
         masses_[static_cast<std::size_t>(core_.slot_of(round.receive_from[r]))]) {
      pending += round.receive_weights[r] * static_cast<double>(mass->values().back());
    }
  }
  return pending;
}

void PushSum::begin(double now_s, Actions& out) {
  core_.begin_round(now_s);
  core_.decide(now_s);
  const auto& send_to = core_.round().send_to;
  const bool combine_first = core_.config().order == UpdateOrder::kCombineThenAdapt;
  if (combine_first && !send_to.empty()) core_.send(send_to, core_.x(), out);
  core_.set_gradient_point(debiased(core_.x()));
  out.push_back(StartGradient{core_.k(),
                              core_.gradient_point(),
                              {},
                              true,
                              1.0,
                              core_.policy().wants_gradient_stats(core_.k())});
}

std::vector<float> PushSum::gradient_done(double now_s, std::vector<float> gradient,
                                          const GradientStats& stats, Actions& out) {
  // The weight takes no step; the step is scaled by the weight (mix(); y below).
  padded_.assign(gradient.begin(), gradient.end());
  padded_.push_back(0.0f);
  observe_gradient(core_, stats, now_s);
  if (core_.config().order == UpdateOrder::kCombineThenAdapt) {
    gradient_.assign(padded_.begin(), padded_.end());
    own_ = core_.x();
    return gradient;
  }
  own_ = adapt(core_, padded_, gradient_, core_.x()->values().back());
  if (!core_.round().send_to.empty()) core_.send(core_.round().send_to, own_, out);
  return gradient;
}

void PushSum::took_model(int s, std::int64_t tag, const Params& params) {
  auto& masses = masses_[static_cast<std::size_t>(s)];
  masses.emplace_back(tag, params);
  if (masses.size() <= max_masses_) return;
  // A neighbour far ahead: its two newest models become one mass, added with the newer tag.
  auto newest = std::move(masses.back());
  masses.pop_back();
  auto& older = masses.back();
  std::vector<float> sum(older.second->values().begin(), older.second->values().end());
  const auto add = newest.second->values();
  for (std::size_t p = 0; p < sum.size(); ++p) sum[p] += add[p];
  older = {newest.first, make_params(std::move(sum))};
}

std::vector<std::pair<float, Params>> PushSum::take_masses(IterationRecord& record) {
  std::vector<std::pair<float, Params>> taken;
  const topology::RoundPeers& round = core_.round();
  // full adds exactly the tag-k messages (D-PSGD, the same bits in every runtime); the
  // backup policies add whatever came, so mass from a neighbour far ahead is not held back
  // until this peer reaches its tags (meanwhile its weight would shrink to nothing).
  const bool exact = core_.policy().mixes_exact_iteration();
  for (std::size_t r = 0; r < core_.round_slots().size(); ++r) {
    auto& masses = masses_[static_cast<std::size_t>(core_.round_slots()[r])];
    const auto weight = static_cast<float>(round.receive_weights[r]);
    bool used = false;
    while (!masses.empty() && (!exact || masses.front().first <= core_.k())) {
      taken.emplace_back(weight, std::move(masses.front().second));
      record.used_tags.push_back(masses.front().first);
      record.used_weights.push_back(weight);
      masses.pop_front();
      used = true;
    }
    if (used) record.used.push_back(round.receive_from[r]);
  }
  return taken;
}

// Keeps its own share and adds every mass received (no renormalisation: what is not here yet
// is added when it comes).
void PushSum::mix(double, const UpdatePlan& plan, std::span<float> next, IterationRecord& record) {
  record.self_weight = core_.round().self_weight;
  std::vector<MixTerm> terms;
  const auto masses = take_masses(record);
  for (const auto& [weight, mass] : masses) terms.push_back({weight, mass->values()});
  // Charged per neighbour whose masses it adds (as it always was), not per mass.
  record.terms_mixed = static_cast<int>(record.used.size());
  const auto own = own_->values();
  const auto lr = static_cast<float>(core_.learning_rate());
  const auto self_weight = static_cast<float>(record.self_weight);
  if (core_.config().order == UpdateOrder::kCombineThenAdapt) {
    if (core_.has_local_step()) core_.to_direction(gradient_);
    // Mix first, then step by lr w(k+1) g, so that the de-biased model x(k+1) / w(k+1) moves
    // by lr g whatever the weight became: with plain g a peer whose in-neighbours were skipped
    // (its weight shrinking to its own share each iteration) would step by lr g / w and
    // diverge.
    mix_and_step(next, self_weight, own, terms, 0.0f, {});
    const float scale = lr * next.back();
    for (std::size_t p = 0; p + 1 < next.size(); ++p) next[p] -= scale * gradient_[p];
  } else {
    mix_and_step(next, self_weight, own, terms, lr, {});
  }
  keep_weight_normal(next);
  if (disagreement_due(core_, plan.used)) {
    std::vector<std::span<const float>> models;
    for (int u : plan.used) {
      models.push_back(
          core_.mixed(core_.slot(core_.round_slots()[static_cast<std::size_t>(u)]))->values());
    }
    observe_disagreement(own, models);
  }
  own_.reset();
}

// Push-sum models are numerators with their weight last: disagreement is between x / w.
void PushSum::observe_disagreement(std::span<const float> own,
                                   const std::vector<std::span<const float>>& models) {
  const std::vector<float> own_z = debias(own);
  std::vector<std::vector<float>> kept;
  std::vector<std::span<const float>> spans;
  for (const auto& m : models) kept.push_back(debias(m));
  for (const auto& z : kept) spans.emplace_back(z);
  core_.policy().observe_disagreement(neighbourhood_disagreement(own_z, spans));
}

std::unique_ptr<MixingVariant> make_push_sum(IterationCore& core) {
  return std::make_unique<PushSum>(core);
}

}  // namespace fastk::consensus
