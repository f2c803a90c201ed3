// AD-PSGD's pairwise averages (policy ad_psgd, docs/protocol.md §4.5; the arithmetic and the
// open requests are PairwiseAveraging's, consensus/pairwise_averaging.h): an active peer asks
// one passive neighbour per iteration to average and adds the reply's half at its update; a
// passive peer averages at once when asked. Nobody waits for a neighbourhood.
#include <stdexcept>

#include "consensus/mix_step.h"
#include "consensus/pairwise_averaging.h"
#include "consensus/variants/shared_steps.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

class Pairwise final : public MixingVariant {
 public:
  explicit Pairwise(IterationCore& core)
      : core_(core),
        averaging_(core.self(), core.schedule(), core.config().seed, core.parameters()),
        last_reply_(core.slots().size()) {
    // Silence counts from a request: only the partner whose reply is awaited must speak.
    core_.expect_only([this](const Slot& slot) {
      const auto partner = averaging_.awaited();
      return partner && &slot == &core_.slot(core_.slot_of(*partner));
    });
  }

  std::size_t models_kept_queued() const override { return exact_queue(core_); }
  Params debiased(const Params& x) const override { return x; }

  // An active peer asks one passive neighbour still there to average with the model its
  // gradient is taken at; a passive peer only computes (requests come to it).
  void begin(double now_s, Actions& out) override {
    core_.begin_round(now_s);
    core_.set_awaited(0);
    if (averaging_.active()) {
      std::vector<PeerId> available;
      const auto& round = core_.round();
      for (std::size_t r = 0; r < core_.round_slots().size(); ++r) {
        // One open request per partner: a silent one is not asked again until it answers.
        const PeerId j = round.receive_from[r];
        if (!core_.slot(core_.round_slots()[r]).departed && !averaging_.open_with(j)) {
          available.push_back(j);
        }
      }
      if (const auto partner = averaging_.choose(core_.k(), available)) {
        averaging_.requested(*partner, core_.k(), core_.x());
        core_.slot(core_.slot_of(*partner)).last_heard_s = now_s;
        out.push_back(SendAveraging{*partner, AveragingStep::kRequest, core_.k(), core_.x()});
        core_.set_awaited(1);
      }
    }
    core_.set_gradient_point(core_.x());
    out.push_back(StartGradient{core_.k(), core_.x(), {}, true, 1.0, false});
  }

  std::size_t gradient_size() const override { return core_.parameters(); }

  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions&) override {
    observe_gradient(core_, stats, now_s);
    std::swap(gradient_, gradient);  // kept until the update; the last one's vector goes back
    return gradient;
  }

  std::vector<float> release_gradient() override { return std::exchange(gradient_, {}); }

  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    if (const auto partner = averaging_.awaited()) {
      const int s = core_.slot_of(*partner);
      if (!core_.gone(core_.slot(s), now_s)) {
        core_.arm_silence_timer(std::span<const int>(&s, 1), now_s, out);
        return std::nullopt;
      }
      averaging_.give_up();
    }
    return UpdatePlan{{}, core_.decision().awaited};
  }

  // The model, averaged already (passive) or to be by the replies' differences (active),
  // takes the step of the gradient taken before.
  void mix(double, const UpdatePlan&, std::span<float> next, IterationRecord& record) override {
    record.self_weight = 1.0;
    std::vector<MixTerm> terms;
    const std::vector<float> difference = take_averages(record);
    if (!difference.empty()) terms.push_back({1.0f, difference});
    record.terms_mixed = static_cast<int>(terms.size());
    if (core_.has_local_step()) core_.to_direction(gradient_);
    mix_and_step(next, 1.0f, core_.x()->values(), terms, static_cast<float>(core_.learning_rate()),
                 gradient_);
  }

  void took_model(int, std::int64_t, const Params&) override {}
  bool take(double, const CodedGradientArrived& m, Actions&) override { return refuse(core_, m); }
  bool take(double, const DifferenceArrived& m, Actions&) override { return refuse(core_, m); }
  bool take(double now_s, const AveragingArrived& m, bool in_play, Actions& out) override;
  // It restarted: an open request is lost with it.
  bool validation_done(double, const ValidationDone& v, Actions&) override {
    return no_validation_asked(v);
  }
  void neighbour_back(PeerId peer) override { averaging_.forget(peer); }
  void settle() override;
  std::int64_t recorded_tag(int s, bool used, std::int64_t used_tag) const override {
    return used ? used_tag : core_.slot(s).tag;
  }
  // An active neighbour stops asking a peer that said goodbye (it would only decline).
  bool neighbours_need_goodbye() const override { return true; }

 private:
  std::optional<DropCause> unusable(const AveragingArrived& m) const;
  void answer(Slot& slot, const AveragingArrived& m, bool in_play, Actions& out);
  // The averages since the last update, recorded as used in `record`; for an active peer
  // the replies' differences, summed, to add (empty when none).
  std::vector<float> take_averages(IterationRecord& record);

  IterationCore& core_;
  PairwiseAveraging averaging_;
  // Passive, per slot: the last reply to this (active) neighbour, held until its next
  // request, which it sends only after reading the reply: a runtime that shares the buffer
  // (shared memory) must not rewrite it before then, or half an average would be lost.
  std::vector<Params> last_reply_;
  std::vector<std::pair<PeerId, std::int64_t>> averaged_with_;  // passive: since the update
  std::vector<float> gradient_;
};

std::optional<DropCause> Pairwise::unusable(const AveragingArrived& m) const {
  const bool request = m.step == AveragingStep::kRequest;
  const std::size_t parameters = core_.parameters();
  if (core_.slot_of(m.from) < 0) return DropCause::kNotNeighbour;
  if (m.tag < 0 || m.tag >= core_.config().iterations) return DropCause::kTagOutOfRange;
  if (averaging_.active() == request || averaging_.is_active(m.from) != request) {
    return DropCause::kNotAsked;  // requests go from active to passive peers, replies back
  }
  if ((request && !m.params) || (m.params && m.params->values().size() != parameters)) {
    return DropCause::kWrongSize;
  }
  if (m.params && !m.params->all_finite()) return DropCause::kNonFinite;
  return std::nullopt;
}

bool Pairwise::take(double now_s, const AveragingArrived& m, bool in_play, Actions& out) {
  auto cause = unusable(m);
  const bool request = m.step == AveragingStep::kRequest;
  if (!cause && !request &&
      !averaging_.take_reply(m.from, m.tag,
                             m.params ? m.params->values() : std::span<const float>{})) {
    cause = DropCause::kNotAsked;
  }
  if (cause) {
    core_.drops().add(*cause);
    return false;
  }
  Slot& slot = core_.slot(core_.slot_of(m.from));
  // A reply or decline after the neighbour's BYE is the last word of a peer that left: it must
  // not bring it back to be asked again (a restart does, through NeighbourBack).
  if (slot.departed) {
    slot.last_heard_s = now_s;
  } else {
    core_.heard_from(slot, now_s);
  }
  slot.tag = std::max(slot.tag, m.tag);
  if (m.params) {
    slot.bytes_since_update += static_cast<std::int64_t>(core_.parameters() * sizeof(float));
  }
  if (request) answer(slot, m, in_play, out);
  return true;
}

// A passive peer averages at once, whatever it is doing: the gradient it is computing was
// taken at the model before, as in AD-PSGD. Before its start, while joining and once
// finished its model is not in play, and it declines.
void Pairwise::answer(Slot& slot, const AveragingArrived& m, bool in_play, Actions& out) {
  if (!in_play) {
    out.push_back(SendAveraging{m.from, AveragingStep::kReply, m.tag, nullptr});
    return;
  }
  // Both from the buffer source: the real runtime's shared memory, which a reply to a peer
  // on this machine then travels in, like a model.
  std::shared_ptr<MutableParamBuffer> next = core_.recycled_buffer();
  std::shared_ptr<MutableParamBuffer> reply = core_.recycled_buffer();
  PairwiseAveraging::answer(core_.x()->values(), m.params->values(), next->mutable_values(),
                            reply->mutable_values());
  core_.set_x(std::move(next));
  averaged_with_.emplace_back(m.from, m.tag);
  last_reply_[static_cast<std::size_t>(&slot - core_.slots().data())] = reply;
  out.push_back(SendAveraging{m.from, AveragingStep::kReply, m.tag, std::move(reply)});
}

// The replies' halves taken and not yet added, added without a step: the partners have
// applied theirs, and the sum of the models must hold at the end too.
void Pairwise::settle() {
  averaging_.take_answered();
  const std::vector<float> difference = averaging_.take_difference();
  if (difference.empty()) return;
  std::shared_ptr<MutableParamBuffer> next = core_.recycled_buffer();
  mix_and_step(next->mutable_values(), 1.0f, core_.x()->values(), {{1.0f, difference}}, 0.0f, {});
  core_.set_x(std::move(next));
}

std::vector<float> Pairwise::take_averages(IterationRecord& record) {
  const auto partners =
      averaging_.active() ? averaging_.take_answered() : std::exchange(averaged_with_, {});
  for (const auto& [peer, tag] : partners) {
    record.used.push_back(peer);
    record.used_tags.push_back(tag);
    record.used_weights.push_back(0.5);
  }
  return averaging_.take_difference();
}

}  // namespace

std::unique_ptr<MixingVariant> make_pairwise_averaging(IterationCore& core) {
  return std::make_unique<Pairwise>(core);
}

}  // namespace fastk::consensus
