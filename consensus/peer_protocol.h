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
// is gone after on_neighbour_left, or while silent for silence_timeout_s (if set); a
// message brings it back. Each departure goes out once as a NeighbourGone action. With max_gap > 0,
// iteration k+1 starts only once every neighbour not gone has sent a tag >= k + 1 - max_gap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compression/public_estimate.h"
#include "consensus/actions.h"
#include "consensus/arrival_window.h"
#include "consensus/backup_policy.h"
#include "consensus/coded_neighbourhood.h"
#include "consensus/dropped_messages.h"
#include "consensus/gradient_stats.h"
#include "consensus/inputs.h"
#include "consensus/mix_step.h"
#include "consensus/mixing_weights.h"
#include "consensus/pairwise_averaging.h"
#include "consensus/params.h"
#include "learning/sgd.h"
#include "topology/schedule.h"

namespace fastk::consensus {

enum class UpdateOrder { kCombineThenAdapt, kAdaptThenCombine };
// "combine_then_adapt", "adapt_then_combine"; throws std::invalid_argument otherwise.
UpdateOrder parse_update_order(const std::string& name);
std::string to_string(UpdateOrder order);

struct ProtocolConfig {
  std::int64_t iterations = 1000;  // the peer finishes after this many updates
  // The local step (docs/protocol.md §3.7): the learning rate and its warm-up and schedule
  // (over `iterations`), momentum on this peer's own gradients, weight decay. Each peer keeps
  // its own momentum; only models are mixed. batch_size and seed are the runtime's.
  learning::OptimizerSpec optimizer{.lr = 0.1};
  UpdateOrder order = UpdateOrder::kCombineThenAdapt;
  Renormalisation renormalisation = Renormalisation::kReturnToSelf;
  int m_min = 1;                 // never await fewer (capped at the neighbours available)
  int staleness = 0;             // accept tags >= k - staleness
  int max_gap = 0;               // G_max; 0 = no gap bound
  double silence_timeout_s = 0;  // 0 = a silent neighbour is awaited forever
  PolicySpec policy;
  // Always wait for the neighbours of the graph's spanning tree (topology/spanning_tree.h),
  // whatever the policy decides; the policy chooses among the other neighbours. Every
  // iteration's used edges then connect all peers (docs/protocol.md §5.8). Static graphs only.
  bool keep_connected = false;
  // Push-sum (stochastic gradient push, docs/protocol.md §4.4): the model carries a weight
  // w (one more value, 1 at the start) mixed with the same column-stochastic weights; the
  // gradient is taken at x / w, and every message's mass is added once, late or not.
  // Needs a schedule of period 1; not with coding.
  bool push_sum = false;
  // Coded neighbourhoods (scheme != none): the peer waits until its neighbourhood's gradient
  // decodes (or coding.deadline_s after its own gradient) instead of asking the policy, then
  // steps with the decoded mean gradient; the model goes out with the coded gradients.
  coding::NeighbourhoodCodeSpec coding;
  // Policy ad_psgd: the seed of each active peer's draw of its averaging partner; compressed
  // gossip: the seed of its random rounding and sparsification.
  std::uint64_t seed = 0;
  // Compressed gossip (CHOCO-SGD, docs/compression.md): with a compressor the peer sends the
  // compressed difference to its public estimate instead of its model, and mixes the
  // estimates with this consensus step (gamma, in (0, 1]). Needs adapt_then_combine.
  std::optional<compression::CompressorSpec> compression;
  double consensus_step = 1.0;
};

// Why compressed gossip cannot run on `schedule` (a time-varying or directed graph, or
// W_ij != W_ji for some pair; with `peer`, only the pairs of that peer), or nullopt if it can.
// PeerProtocol refuses such a schedule; the config checks it first, to name it among the
// config's errors.
std::optional<std::string> unfit_for_compressed_gossip(const topology::TopologySchedule& schedule,
                                                       std::optional<PeerId> peer = std::nullopt);

class PeerProtocol {
 public:
  // Throws std::invalid_argument for a bad config or peer id.
  PeerProtocol(PeerId self, std::shared_ptr<const topology::TopologySchedule> schedule,
               ProtocolConfig config, Params initial);

  // A peer that comes back (docs/protocol.md §6.4) first sets where it goes on: from its
  // checkpoint, x(iteration) given as `initial`, before start(). Throws std::logic_error once
  // started, std::invalid_argument for an iteration outside [0, iterations].
  void resume_at(std::int64_t iteration);

  // Events. Each appends the resulting actions to `out`.
  void start(double now_s, Actions& out);
  // Instead of start(), for a peer that comes back without a checkpoint: it waits for a model
  // from every neighbour (or, after silence_timeout_s, from those heard), then starts at the
  // newest of their tags from the plain average of their newest models. When none was heard
  // by then, the event that sees it throws std::runtime_error: there is no run to rejoin.
  void join(double now_s, Actions& out);
  // Everything that happens to the peer once started (or joining): a neighbour's message,
  // its goodbye or return, the gradient asked for, a timer. Each input's effect is described
  // at its handler below. Returns memory the runtime may reuse for its next gradient (the
  // vector of a gradient whose update is done; empty for other inputs or when none is free).
  // Throws what the handlers throw: std::logic_error for a runtime bug (a gradient nobody asked
  // for), std::runtime_error for a training that diverged or a rejoin with nobody left.
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

  PeerId id() const { return self_; }
  std::int64_t iteration() const { return k_; }
  // The mixed state: with push-sum, the numerator x and its weight w as the last value.
  const Params& model() const { return x_; }
  // Compressed gossip: this peer's copy of `peer`'s public estimate (its own for self_), with
  // the differences applied so far; empty without compression or for a non-neighbour.
  std::span<const float> public_estimate(PeerId peer) const;
  // The model to evaluate, save and compute gradients at: x / w with push-sum (a fresh
  // buffer of one value fewer), model() otherwise.
  Params debiased_model() const;
  // Push-sum: this peer's weight w, and the weight of the messages received and not yet
  // added (their share for this peer). Over all peers and messages in flight they sum to the
  // number of peers.
  double push_sum_weight() const;
  double pending_push_sum_weight() const;
  bool finished() const { return phase_ == Phase::kFinished; }
  bool push_sum() const { return config_.push_sum; }
  bool pairwise_averaging() const { return averaging_ != nullptr; }
  // How many of this peer's models a runtime must hold for a neighbour that cannot take them
  // yet, oldest first, before a newer one replaces the oldest; 0: every one (push-sum: each
  // is mass that must arrive once). A policy that mixes each neighbour's iteration-k model
  // itself (full) needs tag k delivered, not replaced by k + 1: with staleness 0 it is at
  // most one iteration ahead of a live neighbour, so 2 suffice. With staleness s the
  // oldest-fresh model a receiver mixes depends on timing anyway; it keeps s + 2, at most 8,
  // so that a neighbour that is gone does not pile up models. Others need only the newest
  // (one mailbox slot).
  std::size_t models_kept_queued() const {
    if (config_.push_sum) return 0;
    if (policy_->mixes_exact_iteration()) {
      return static_cast<std::size_t>(std::min(config_.staleness, 6)) + 2;
    }
    return 1;
  }
  bool joining() const { return phase_ == Phase::kJoining; }
  bool waiting_for_gap() const { return phase_ == Phase::kGapBlocked; }
  std::int64_t dropped_messages() const { return dropped_.total(); }
  const DropCounts& drops() const { return dropped_; }
  // Neighbours of any round, sorted: the peers whose messages are accepted.
  const std::vector<PeerId>& known_neighbours() const { return neighbours_; }
  // Peers this one sends to in any round, sorted: who reads its shared-memory models.
  const std::vector<PeerId>& receivers() const { return receivers_; }
  // Everyone this peer ever exchanges models with, sorted: the union of the two above over
  // the schedule's period, whom a runtime connects to and greets. For an undirected static
  // graph all three are the neighbours; for a time-varying or directed one they differ
  // (one-peer exponential: peer i receives from i - 2^r and sends to i + 2^r).
  const std::vector<PeerId>& contacts() const { return contacts_; }
  // Where the protocol writes each new model (the real runtime: shared memory that
  // same-host neighbours read in place). Without one, or when it returns nullptr, the
  // protocol recycles buffers of its own. The arithmetic, and so the bits, are the same.
  void set_buffer_source(BufferSource source) { buffer_source_ = std::move(source); }

 private:
  // kStopped: stop() ended the run before its last iteration.
  enum class Phase { kNotStarted, kJoining, kRunning, kGapBlocked, kFinished, kStopped };
  struct Slot {
    std::int64_t tag = -1;  // newest tag received
    Params params;
    // The oldest message that was fresh when it arrived: under policy full this is exactly
    // the neighbour's iteration-k model (it is at most one iteration ahead and its messages
    // arrive in order), so full mixes x_j(k) whatever the timing: exact D-PSGD.
    std::int64_t oldest_fresh_tag = -1;
    Params oldest_fresh;
    double last_heard_s = 0;
    bool departed = false;
    bool reported_gone = false;  // NeighbourGone went out for the current departure
    // Newest coded gradient; fresh like models (tag >= k - staleness), so a neighbour that
    // ran ahead still counts, which keeps the liveness argument of uncoded runs.
    CodedPart coded;
    std::int64_t coded_tag = -1;
    // Push-sum: every model received and not yet added, oldest first (tags increase).
    std::deque<std::pair<std::int64_t, Params>> masses;
    std::int64_t bytes_since_update = 0;  // payload taken since the last update
    // ad_psgd, passive: the last reply to this (active) neighbour, held until its next request,
    // which it sends only after reading the reply: a runtime that shares the buffer (shared
    // memory) must not rewrite it before then, or half an average would be lost.
    Params last_reply;
    // Compressed gossip: differences received and not applied yet (tag order; applied at the
    // update of their iteration, so that full mixes exactly iteration k's estimates), and the
    // tag of the last one received.
    std::deque<std::pair<std::int64_t, CompressedPart>> differences;
    std::int64_t difference_tag = -1;
    bool parted = false;  // a difference was lost: gone for good (NeighbourGone::lost_difference)
  };

  // The handlers of handle()'s inputs.
  // `peer` came back (its HELLO arrived mid-run): it counts as heard, and gets the last model
  // sent (when it is one this peer sends to), which it may have missed while it was down and
  // which its neighbours, waiting for it, would not send again.
  void on_neighbour_back(double now_s, PeerId peer, Actions& out);
  // Messages this peer cannot use (dropped_messages.h: not a neighbour, a tag no peer can
  // have, wrong size, a NaN or infinity) are counted by cause and dropped.
  void on_message(double now_s, PeerId from, std::int64_t tag, Params params, Actions& out);
  // A coded gradient of a coded neighbourhood; one that does not fit the code (or arrives
  // when coding is off) or holds a NaN or infinity is counted and dropped.
  void on_coded_gradient(double now_s, PeerId from, std::int64_t tag, CodedPart coded,
                         Actions& out);
  // A neighbour's compressed difference (compressed gossip). One that is malformed, of another
  // length, or not the next of its sender (a gap would part the copies of its estimate) is
  // counted and dropped.
  void on_compressed(double now_s, PeerId from, std::int64_t tag, CompressedPart difference,
                     Actions& out);
  // The gradient requested by the last StartGradient. Throws std::logic_error if none is
  // outstanding (a runtime bug), std::runtime_error if it holds a NaN or infinity (the
  // training diverged: stepping would make the model, and then nothing, usable). `stats`
  // feed the adaptive policy (may be invalid).
  void on_gradient_done(double now_s, std::span<const float> gradient, const GradientStats& stats,
                        Actions& out);
  // on_gradient_done for a vector the protocol may keep (instead of copying it) where it
  // keeps the gradient. Returns a vector the caller may reuse for the next gradient.
  std::vector<float> hand_over_gradient(double now_s, std::vector<float> gradient,
                                        const GradientStats& stats, Actions& out);
  // Policy ad_psgd (pairwise_averaging.h): a request to average (to a passive peer; it
  // averages at once and replies, or declines before its start and once finished) or the
  // reply to this peer's request (added at the next update). Requests to an active peer,
  // replies to nothing asked, and the checks of on_message are counted and dropped.
  void on_averaging(double now_s, PeerId from, AveragingStep step, std::int64_t tag, Params params,
                    Actions& out);
  void on_timer(double now_s, Actions& out);
  void on_neighbour_left(double now_s, PeerId peer, Actions& out);

  int slot_of(PeerId peer) const;  // -1 if not a neighbour
  // Why a vector of `size` floats from `from` with `tag` cannot be used; nullopt when it can.
  std::optional<DropCause> unusable(PeerId from, std::int64_t tag, const Params& params,
                                    std::size_t size) const;
  bool gone(const Slot& slot, double now_s) const;
  bool fresh(const Slot& slot) const;
  // What the update mixes from a slot: the newest model, or under policy full the
  // iteration-k one.
  const Params& mixed(const Slot& slot) const;
  void begin_or_block(double now_s, Actions& out);
  void try_join(double now_s, Actions& out);
  // After the iteration moved: a slot's oldest fresh message that is now stale gives way to
  // its newest, if that is fresh.
  void refresh_oldest_fresh();
  void send(std::vector<PeerId> to, Params params, Actions& out);
  void begin_iteration(double now_s, Actions& out);
  void catch_up(double now_s);
  void try_update(double now_s, Actions& out);
  void try_update_coded(double now_s, Actions& out);
  bool usable_coded(const Slot& slot) const;
  // The usable coded parts, with their senders and iterations.
  std::vector<CodedNeighbourhood::Share> usable_shares() const;
  // The coded step's gradient (decoded from the usable coded gradients) into decoded_.
  void decode_neighbourhood(IterationRecord& record);
  void update(double now_s, const std::vector<int>& used, int required, Actions& out);
  void await_spanning_tree();  // keep_connected: fills tree_slots_
  // The update's neighbour_records, from its used models and the arrival window.
  void record_neighbours(IterationRecord& record);
  void check_push_sum() const;
  void check_pairwise_averaging() const;
  void check_compression() const;
  void part_from(Slot& slot);
  // Compressed gossip: the mix of the estimates, x_half + gamma sum_j w_ij (x_hat_j - x_hat_i),
  // as terms of mix_and_step, after applying the differences of iterations up to k.
  std::vector<MixTerm> estimate_terms(double now_s);
  void settle_averages();
  // ad_psgd: the iteration's request (active peers) and gradient.
  void begin_averaging(double now_s, Actions& out);
  void answer_request(Slot& slot, PeerId from, std::int64_t tag, const Params& theirs,
                      Actions& out);
  void try_update_averaging(double now_s, Actions& out);
  // ad_psgd: the averages since the last update, recorded as used in `record`; for an active
  // peer the replies' differences, summed, to add (empty when none).
  std::vector<float> take_averages(IterationRecord& record);
  // The learning rate of iteration k_ (warm-up and schedule).
  double learning_rate() const;
  // The step's direction in place of the gradient `step` (its model values; push-sum's
  // weight entry stays 0): momentum and weight decay at the model the gradient was taken at.
  void to_direction(std::span<float> step);
  // Push-sum: a received model kept until an update adds it (folding the newest two when a
  // neighbour is far ahead, so a slot holds at most max_masses_).
  void keep_mass(Slot& slot, std::int64_t tag, const Params& params);
  // Push-sum: the masses of tag <= k, taken out of their slots, with their weights; recorded
  // as used in `record`.
  std::vector<std::pair<float, Params>> take_masses(IterationRecord& record);
  void keep_weight_normal(std::span<float> next);
  void observe_debiased_disagreement(std::span<const float> own,
                                     const std::vector<std::span<const float>>& models);
  // keep_connected: the tree neighbours that are neither fresh nor gone (slot indices).
  std::vector<int> missing_tree_neighbours(double now_s) const;
  std::shared_ptr<MutableParamBuffer> recycled_buffer();
  void arm_silence_timer(std::span<const int> slots, double now_s, Actions& out);
  void arm(double at_s, Actions& out);
  void reevaluate(double now_s, Actions& out);
  // NeighbourGone for every neighbour that is gone and not reported yet.
  void report_departures(double now_s, Actions& out);
  // A message from the slot's neighbour: heard now, and back if it was gone.
  void heard_from(Slot& slot, double now_s);

  PeerId self_;
  std::shared_ptr<const topology::TopologySchedule> schedule_;
  ProtocolConfig config_;
  std::unique_ptr<BackupPolicy> policy_;
  std::size_t parameters_;

  std::vector<PeerId> neighbours_;
  std::vector<Slot> slots_;
  std::vector<PeerId> receivers_;  // of any round, sorted: whom on_neighbour_back resends to
  std::vector<PeerId> contacts_;   // neighbours_ and receivers_, merged
  std::vector<int> tree_slots_;    // keep_connected: slots of the spanning tree's neighbours
  int relaxed_floor_ = 0;          // this iteration's m_min, raised to the tree neighbours
  std::int64_t last_sent_tag_ = -1;
  Params last_sent_;
  std::optional<double> join_until_s_;  // join: then go on with the neighbours heard

  Phase phase_ = Phase::kNotStarted;
  std::int64_t k_ = 0;
  Params x_;
  topology::RoundPeers round_;
  std::vector<int> round_slots_;  // slot index of each round_.receive_from
  Decision decision_;
  int awaitable_ = 0;
  double start_s_ = 0;
  double gradient_done_s_ = 0;
  bool gradient_ready_ = false;
  std::optional<double> relax_at_;
  std::vector<float> gradient_;  // CTA: kept until the update
  std::unique_ptr<CodedNeighbourhood> coded_;
  std::vector<PeerId> partitions_;  // computed this iteration (coded)
  std::vector<float> decoded_;      // the decoded neighbourhood mean gradient
  Params own_for_mix_;              // CTA: x(k); ATC: y(k)
  static constexpr std::size_t kMaxSpareBuffers = 4;
  std::vector<std::shared_ptr<VectorParams>> spare_buffers_;
  BufferSource buffer_source_;
  ArrivalWindow arrivals_;
  std::optional<double> armed_at_s_;
  bool unreported_departure_ = false;  // on_neighbour_left since the last report_departures
  DropCounts dropped_;
  std::size_t max_masses_ = 8;               // push-sum: kept messages per neighbour before folding
  std::vector<float> padded_gradient_;       // push-sum: the gradient with a 0 for the weight
  std::optional<learning::Sgd> local_step_;  // with momentum or weight decay
  Params gradient_point_;                    // where this iteration's gradient is taken
  std::unique_ptr<PairwiseAveraging> averaging_;  // policy ad_psgd
  // Compressed gossip: the own public estimate, and one per slot (each neighbour's).
  std::optional<compression::PublicEstimate> own_estimate_;
  std::vector<compression::PublicEstimate> estimates_;
  std::vector<std::pair<PeerId, std::int64_t>> averaged_with_;  // ad_psgd, passive: since update
};

}  // namespace fastk::consensus
