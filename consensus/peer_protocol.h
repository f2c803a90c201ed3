// One peer of decentralized SGD with backup workers, as a state machine without I/O
// (docs/design.md "The protocol and its two runtimes"; docs/protocol.md §2, §3 and §6).
// Events go in with the current time `now_s` (virtual or real); actions come out
// (actions.h). The simulator, the ZeroMQ runtime and the tests all drive this one class.
//
// Iteration k, combine-then-adapt (default):
//   begin:          send (tag k, x(k)) to round(k).send_to; m = policy.decide(); gradient at x(k)
//   gradient done:  wait until #fresh >= required, then
//                   x(k+1) = w_ii x(k) + sum_{j in S} w_ij x_j - lr * g,  S = all fresh now
// adapt-then-combine: gradient at x(k) first; when done, y = x(k) - lr g is sent with tag k,
//   then x(k+1) = w_ii y + sum_{j in S} w_ij y_j.
// Fresh: the newest message from j (one mailbox slot per neighbour) has tag >= k - staleness.
// required = m, relaxed to m_min from the policy's relax_at() on (deadline, adaptive), never more
// than the neighbours that can still deliver (fresh ones plus those not gone). With
// keep_connected, the spanning tree's neighbours are awaited too, relaxed or not. A neighbour
// is gone after its NeighbourLeft, or while silent for silence_timeout_s (if set); a
// message brings it back. Each departure goes out once as a NeighbourGone action. With max_gap > 0,
// iteration k+1 starts only once every neighbour not gone has sent a tag >= k + 1 - max_gap.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "consensus/actions.h"
#include "consensus/dropped_messages.h"
#include "consensus/inputs.h"
#include "consensus/iteration_core.h"
#include "consensus/mixing_variant.h"
#include "consensus/params.h"
#include "consensus/protocol_config.h"
#include "topology/schedule.h"

namespace fastk::consensus {

// The iteration of one peer (docs/design.md "The protocol: an iteration core and mixing
// variants"): its phases (not started, joining, running, blocked by the gap bound, finished,
// stopped), the inputs and what each means for the slots, departures, and the update's
// record. How the peer combines what it has is its MixingVariant's, chosen from the config.
class PeerProtocol {
 public:
  // Throws std::invalid_argument for a bad config or peer id.
  PeerProtocol(PeerId self, std::shared_ptr<const topology::TopologySchedule> schedule,
               ProtocolConfig config, Params initial);
  // The variant holds the core by reference: a protocol stays where it was made.
  PeerProtocol(const PeerProtocol&) = delete;
  PeerProtocol& operator=(const PeerProtocol&) = delete;

  // A peer that comes back (docs/protocol.md §6.4) first sets where it goes on: from its
  // checkpoint, x(iteration) given as `initial`, before start(). Throws std::logic_error once
  // started, std::invalid_argument for an iteration outside [0, iterations] or a run whose
  // peers cannot come back (comeback.h).
  void resume_at(std::int64_t iteration);

  // Each appends the resulting actions to `out`.
  void start(double now_s, Actions& out);
  // Instead of start(), for a peer that comes back without a checkpoint: it waits for a model
  // from every neighbour (or, after silence_timeout_s, from those heard), then starts at the
  // newest of their tags from the plain average of their newest models. When none was heard
  // by then, the event that sees it throws std::runtime_error: there is no run to rejoin.
  void join(double now_s, Actions& out);
  // Everything that happens to the peer once started (or joining): a neighbour's message,
  // its goodbye or return, the gradient asked for, a timer (inputs.h says what each is).
  // Messages this peer cannot use (dropped_messages.h: not a neighbour, a tag no peer can
  // have, wrong size, a NaN or infinity, not of this run's variant) are counted by cause and
  // dropped. Returns memory the runtime may reuse for its next gradient (the vector of a
  // gradient whose update is done; empty for other inputs or when none is free). Throws
  // std::logic_error for a gradient nobody asked for (a runtime bug), std::runtime_error for
  // a gradient with a NaN or infinity (the training diverged) or a rejoin with nobody left.
  std::vector<float> handle(double now_s, Input input, Actions& out);
  // The gradient vector kept for an update that is done (empty while it is still needed, or
  // when none is kept), so that a runtime computes the next gradient into the same memory:
  // one gradient buffer per peer instead of two taking turns.
  std::vector<float> release_gradient();
  // The run ends before the last iteration (time budget, target, signal): from now on the
  // protocol takes no step and asks for nothing. ad_psgd: it declines requests, and the
  // replies that still come (and those taken and not yet added) are added to the model, since
  // their senders applied their halves.
  void stop();

  PeerId id() const { return core_.self(); }
  std::int64_t iteration() const { return core_.k(); }
  // The mixed state: with push-sum, the numerator x and its weight w as the last value.
  const Params& model() const { return core_.x(); }
  // The model to evaluate, save and compute gradients at: x / w with push-sum (a fresh
  // buffer of one value fewer), model() otherwise.
  Params debiased_model() const { return variant_->debiased(core_.x()); }
  // The variant this peer runs, for what only it can tell (a test's look inside).
  const MixingVariant& variant() const { return *variant_; }
  bool finished() const { return phase_ == Phase::kFinished; }
  // Neighbours act on this peer's goodbye (MixingVariant::neighbours_need_goodbye).
  bool neighbours_need_goodbye() const { return variant_->neighbours_need_goodbye(); }
  // How many of this peer's models a runtime must hold for a neighbour that cannot take them
  // yet, oldest first, before a newer one replaces the oldest; 0: every one (each is mass
  // that must arrive once, and no shared slot may be rewritten under it).
  std::size_t models_kept_queued() const { return variant_->models_kept_queued(); }
  bool joining() const { return phase_ == Phase::kJoining; }
  bool waiting_for_gap() const { return phase_ == Phase::kGapBlocked; }
  std::int64_t dropped_messages() const { return core_.drops().total(); }
  const DropCounts& drops() const { return core_.drops(); }
  // Neighbours of any round, sorted: the peers whose messages are accepted.
  const std::vector<PeerId>& known_neighbours() const { return core_.neighbours(); }
  // Peers this one sends to in any round, sorted: who reads its shared-memory models.
  const std::vector<PeerId>& receivers() const { return core_.receivers(); }
  // Everyone this peer ever exchanges models with, sorted: the union of the two above over
  // the schedule's period, whom a runtime connects to and greets. For an undirected static
  // graph all three are the neighbours; for a time-varying or directed one they differ
  // (one-peer exponential: peer i receives from i - 2^r and sends to i + 2^r).
  const std::vector<PeerId>& contacts() const { return core_.contacts(); }
  // Where the protocol writes each new model (the real runtime: shared memory that
  // same-host neighbours read in place). Without one, or when it returns nullptr, the
  // protocol recycles buffers of its own. The arithmetic, and so the bits, are the same.
  void set_buffer_source(BufferSource source) { core_.set_buffer_source(std::move(source)); }

 private:
  // kStopped: stop() ended the run before its last iteration.
  enum class Phase { kNotStarted, kJoining, kRunning, kGapBlocked, kFinished, kStopped };

  // The inputs.
  void on_message(double now_s, const ModelArrived& m, Actions& out);
  void on_averaging(double now_s, const AveragingArrived& m, Actions& out);
  std::vector<float> on_gradient_done(double now_s, std::vector<float> gradient,
                                      const GradientStats& stats, Actions& out);
  void on_neighbour_left(double now_s, PeerId peer, Actions& out);
  // `peer` came back (its HELLO arrived mid-run): it counts as heard, and gets the last model
  // sent (when it is one this peer sends to), which it may have missed while it was down and
  // which its neighbours, waiting for it, would not send again.
  void on_neighbour_back(double now_s, PeerId peer, Actions& out);

  void try_join(double now_s, Actions& out);
  void begin_or_block(double now_s, Actions& out);
  void try_update(double now_s, Actions& out);
  void update(double now_s, const UpdatePlan& plan, Actions& out);
  // The update's neighbour_records, from its used models and the arrival window.
  void record_neighbours(IterationRecord& record);
  void reevaluate(double now_s, Actions& out);
  // NeighbourGone for every neighbour that is gone and not reported yet.
  void report_departures(double now_s, Actions& out);

  IterationCore core_;
  std::unique_ptr<MixingVariant> variant_;
  Phase phase_ = Phase::kNotStarted;
  std::optional<double> join_until_s_;  // join: then go on with the neighbours heard
  bool gradient_ready_ = false;
  double gradient_done_s_ = 0;
};

}  // namespace fastk::consensus
