#include "consensus/variants/shared_steps.h"

#include <algorithm>

#include "consensus/mix_step.h"
#include "consensus/mixing_weights.h"

namespace fastk::consensus {

std::size_t exact_queue(const IterationCore& core) {
  if (!core.policy().mixes_exact_iteration()) return 1;
  return static_cast<std::size_t>(std::min(core.config().staleness, 6)) + 2;
}

std::optional<UpdatePlan> await_backups(IterationCore& core, double now_s, Actions& out) {
  std::vector<int> used;     // indices into round().receive_from
  std::vector<int> pending;  // slots that may still deliver
  const auto& round_slots = core.round_slots();
  for (std::size_t r = 0; r < round_slots.size(); ++r) {
    const Slot& slot = core.slot(round_slots[r]);
    if (slot.parted) continue;  // its estimate here is no longer its own: not mixed, not counted
    if (core.fresh(slot)) {
      used.push_back(static_cast<int>(r));
    } else if (!core.gone(slot, now_s)) {
      pending.push_back(round_slots[r]);
    }
  }
  const std::optional<double> relax_at = core.relax_at();
  int required = core.decision().awaited;
  const bool relaxed = relax_at && now_s >= *relax_at;
  if (relaxed) required = std::min(required, core.relaxed_floor());
  required = std::min(required, static_cast<int>(used.size() + pending.size()));
  const std::vector<int> tree_missing = core.missing_tree_neighbours(now_s);
  if (static_cast<int>(used.size()) < required || !tree_missing.empty()) {
    if (relax_at && !relaxed) core.arm(*relax_at, out);
    core.arm_silence_timer(pending, now_s, out);
    return std::nullopt;
  }
  return UpdatePlan{std::move(used), required};
}

void observe_gradient(IterationCore& core, const GradientStats& stats, double now_s) {
  core.policy().observe_gradient(stats);
  core.relax_at() = core.policy().relax_at(core.start_s(), now_s);
}

std::vector<MixTerm> weighted_terms(const IterationCore& core, const std::vector<int>& used,
                                    IterationRecord& record) {
  const topology::RoundPeers& round = core.round();
  const SubsetRow row =
      subset_row(round.receive_weights, round.self_weight, used, core.config().renormalisation);
  record.used_weights = row.weights;
  record.self_weight = row.self_weight;
  std::vector<MixTerm> terms;
  for (std::size_t u = 0; u < used.size(); ++u) {
    const auto r = static_cast<std::size_t>(used[u]);
    const Slot& slot = core.slot(core.round_slots()[r]);
    terms.push_back({static_cast<float>(row.weights[u]), core.mixed(slot)->values()});
    record.used.push_back(round.receive_from[r]);
    record.used_tags.push_back(core.mixed_tag(slot));
  }
  return terms;
}

// nu2 costs a pass over the models mixed: measured every disagreement_every iterations (it
// changes slowly, and the policy smooths it anyway), so it costs next to nothing.
bool disagreement_due(const IterationCore& core, const std::vector<int>& used) {
  return core.policy().wants_disagreement() && !used.empty() &&
         core.gossip_round() % core.config().policy.disagreement_every == 0;
}

Params adapt(IterationCore& core, std::span<const float> gradient, std::vector<float>& scratch,
             float scale) {
  if (core.has_local_step()) {
    scratch.assign(gradient.begin(), gradient.end());
    core.to_direction(scratch);
    gradient = scratch;
  }
  const auto lr = static_cast<float>(core.learning_rate());
  const auto x = core.x()->values();
  std::shared_ptr<MutableParamBuffer> y = core.recycled_buffer();
  const std::span<float> values = y->mutable_values();
  // Push-sum: y / w = x / w - lr g (exactly lr g when the scale is 1, as without push-sum).
  for (std::size_t p = 0; p < values.size(); ++p) values[p] = x[p] - lr * scale * gradient[p];
  return y;
}

}  // namespace fastk::consensus
