// How a peer combines what it has: one class per variant of decentralized SGD behind this
// interface (docs/design.md "Adding a mixing variant"). The iteration core (iteration_core.h)
// and PeerProtocol own what every variant shares: the iteration, the slots of received models
// with their freshness and tags, the backup policy's decision, departures, timers. A variant
// says what goes out when an iteration begins and when the gradient is done, when the update
// may happen, and what the update mixes. Every method is pure virtual, so a new variant that
// leaves one out does not compile; where a variant takes no message of a kind, it says so with
// the refusals below.
//
// The variants: weighted averaging over the used subset (weighted_average.cc), push-sum
// (push_sum.cc), AD-PSGD's pairwise averages (pairwise.cc), CHOCO's compressed estimates
// (compressed_gossip.cc), coded neighbourhoods (coded.cc), and the aggregation rules of
// variants.h (coordinate_trimming.cc, clipped_gossip.cc), all in consensus/variants/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "consensus/actions.h"
#include "consensus/gradient_stats.h"
#include "consensus/inputs.h"
#include "consensus/iteration_core.h"

namespace fastk::consensus {

// What an update mixes: the neighbours used (indices into the round's receive_from), and the
// number of fresh models it waited for (IterationRecord::required).
struct UpdatePlan {
  std::vector<int> used;
  int required = 0;
};

class MixingVariant {
 public:
  virtual ~MixingVariant() = default;

  // How many of this peer's models a runtime must hold for a neighbour that cannot take them
  // yet, oldest first (PeerProtocol::models_kept_queued); 0: every one.
  virtual std::size_t models_kept_queued() const = 0;
  // The model to evaluate, save and compute gradients at, from the mixed state x.
  virtual Params debiased(const Params& x) const = 0;

  // Iteration k begins; the core has begun its round. Decide (or not) with the policy, send
  // what goes out first, and ask for the gradient (StartGradient).
  virtual void begin(double now_s, Actions& out) = 0;
  // How many values the gradient asked for has.
  virtual std::size_t gradient_size() const = 0;
  // The gradient asked for, checked for size and finiteness. Returns a vector the runtime
  // may reuse for its next gradient (the argument or one the variant no longer needs).
  virtual std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                           const GradientStats& stats, Actions& out) = 0;
  // The gradient vector kept for an update that is done, for the runtime to compute the next
  // one into (empty when none is kept). Asked only while no gradient is outstanding.
  virtual std::vector<float> release_gradient() = 0;
  // After any input once the gradient is done: the neighbours to mix when the update may
  // happen now; nullopt while it waits (with the timers it needs armed).
  virtual std::optional<UpdatePlan> ready(double now_s, Actions& out) = 0;
  // x(k+1) into `next`, and in `record` what was mixed (used, used_tags, used_weights,
  // self_weight, terms_mixed, and the coded fields).
  virtual void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
                   IterationRecord& record) = 0;

  // A neighbour's model, usable and newer than any before it, was put in slot `s`.
  virtual void took_model(int s, std::int64_t tag, const Params& params) = 0;
  // The messages only some variants take. Each returns whether the peer re-evaluates (false
  // for a message dropped: the variant counts it in core.drops()).
  virtual bool take(double now_s, const CodedGradientArrived& m, Actions& out) = 0;
  virtual bool take(double now_s, const DifferenceArrived& m, Actions& out) = 0;
  // `in_play`: the peer is iterating (not before its start, joining or after its end).
  virtual bool take(double now_s, const AveragingArrived& m, bool in_play, Actions& out) = 0;
  // The losses a StartValidation of this variant asked for; returns whether the peer
  // re-evaluates. A variant that asks for none throws std::logic_error (a runtime's bug).
  virtual bool validation_done(double now_s, const ValidationDone& v, Actions& out) = 0;
  // `peer` restarted (its HELLO came back mid-run).
  virtual void neighbour_back(PeerId peer) = 0;
  // The run ended (finished or stopped): settle what must not be lost.
  virtual void settle() = 0;
  // The tag neighbours.csv gives slot `s`'s neighbour (its tag_lag): of the model mixed,
  // `used_tag`, when it was used, else its newest.
  virtual std::int64_t recorded_tag(int s, bool used, std::int64_t used_tag) const = 0;
  // Neighbours act on this peer's goodbye (a BYE after its last iteration): a simulator
  // sends one only then (a real peer always does).
  virtual bool neighbours_need_goodbye() const = 0;
};

// The variant `core`'s config asks for. Throws std::invalid_argument for a config the variant
// cannot run, naming the option to drop.
std::unique_ptr<MixingVariant> make_mixing_variant(IterationCore& core);

// `name` if it names an aggregation rule of variants.h; else std::invalid_argument listing
// them.
std::string parse_aggregation(const std::string& name);

// What a variant that takes no message of a kind does: counts the drop, by the cause every
// message gets first (neighbour, tag, size) or else the kind's own. Returns false.
bool refuse(IterationCore& core, const CodedGradientArrived& m);
bool refuse(IterationCore& core, const DifferenceArrived& m);
bool refuse(IterationCore& core, const AveragingArrived& m);
// What a variant that asks for no validation does with a ValidationDone: throws.
bool no_validation_asked(const ValidationDone& v);

}  // namespace fastk::consensus
