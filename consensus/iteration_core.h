// What every mixing variant shares (docs/design.md "The protocol: an iteration core and mixing
// variants"): the peer's place in the schedule, the iteration k and the model x(k), one slot
// per neighbour with the newest model it sent and when it was heard, which neighbours are
// fresh or gone, the backup policy's decision, the local step, the buffers new models are
// written into, and the sends and timers that go out. PeerProtocol (peer_protocol.h) runs the
// iteration on it; a MixingVariant (mixing_variant.h) decides how the peer combines what it
// has. Neither asks which variant runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "consensus/actions.h"
#include "consensus/arrival_window.h"
#include "consensus/backup_policy.h"
#include "consensus/dropped_messages.h"
#include "consensus/params.h"
#include "consensus/protocol_config.h"
#include "learning/sgd.h"
#include "topology/schedule.h"

namespace fastk::consensus {

// One neighbour, as every variant sees it. Variants keep what only they need per neighbour
// themselves, indexed like the slots.
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
  // A variant parted from it for good (compressed gossip lost one of its differences): not
  // mixed, not awaited, reported gone (NeighbourGone::lost_difference).
  bool parted = false;
  std::int64_t bytes_since_update = 0;  // payload taken since the last update
};

class IterationCore {
 public:
  // Throws std::invalid_argument for a bad config or peer id.
  IterationCore(PeerId self, std::shared_ptr<const topology::TopologySchedule> schedule,
                ProtocolConfig config, Params initial);

  // --- fixed for the run
  PeerId self() const { return self_; }
  const topology::TopologySchedule& schedule() const { return *schedule_; }
  const ProtocolConfig& config() const { return config_; }
  BackupPolicy& policy() { return *policy_; }
  const BackupPolicy& policy() const { return *policy_; }
  std::size_t parameters() const { return x_->values().size(); }
  const std::vector<PeerId>& neighbours() const { return neighbours_; }
  const std::vector<PeerId>& receivers() const { return receivers_; }
  const std::vector<PeerId>& contacts() const { return contacts_; }
  int slot_of(PeerId peer) const;  // -1 if not a neighbour

  // --- the neighbours
  std::vector<Slot>& slots() { return slots_; }
  const std::vector<Slot>& slots() const { return slots_; }
  Slot& slot(int s) { return slots_[static_cast<std::size_t>(s)]; }
  const Slot& slot(int s) const { return slots_[static_cast<std::size_t>(s)]; }
  bool fresh(const Slot& slot) const { return slot.tag >= 0 && slot.tag >= k_ - config_.staleness; }
  // Gone: departed, parted, or silent for the silence timeout while expected to speak.
  bool gone(const Slot& slot, double now_s) const;
  // When the slot's current silence began (what the silence timeout counts from).
  double silent_since(const Slot& slot) const;
  // Which neighbours are expected to speak (a variant that expects only some says which;
  // by default every one).
  void expect_only(std::function<bool(const Slot&)> expected) { expected_ = std::move(expected); }
  // What an update mixes from a slot: the newest model, or under policy full the iteration-k one.
  const Params& mixed(const Slot& slot) const;
  // The tag of mixed(slot).
  std::int64_t mixed_tag(const Slot& slot) const;
  void heard_from(Slot& slot, double now_s);
  // After the iteration moved: a slot's oldest fresh message that is now stale gives way to
  // its newest, if that is fresh.
  void refresh_oldest_fresh();
  // Why a vector of `size` floats from `from` with `tag` cannot be used; nullopt when it can.
  std::optional<DropCause> unusable(PeerId from, std::int64_t tag, const Params& params,
                                    std::size_t size) const;
  DropCounts& drops() { return dropped_; }
  const DropCounts& drops() const { return dropped_; }

  // --- the iteration
  std::int64_t k() const { return k_; }
  // The number of the gossip iteration k is, counting from 0 (local_steps: k itself without):
  // the schedule's round and the policy's "every n iterations" count gossips, so that local
  // steps skip none of a time-varying graph's rounds.
  std::int64_t gossip_round() const { return (k_ + 1) / config_.local_steps - 1; }
  // Whether iteration k gossips: every local_steps-th (k + 1 a multiple of it), else it is a
  // local step (local_steps.cc).
  bool gossips() const { return (k_ + 1) % config_.local_steps == 0; }
  void set_k(std::int64_t k) { k_ = k; }
  const Params& x() const { return x_; }
  void set_x(Params x) { x_ = std::move(x); }
  const topology::RoundPeers& round() const { return round_; }
  const std::vector<int>& round_slots() const { return round_slots_; }  // of round().receive_from
  // Iteration k begins at now_s: its round, the neighbours awaitable, the arrival window.
  void begin_round(double now_s);
  // Iteration k is a local step (local_steps.cc): a round with no neighbours, and no
  // iteration of the arrival window.
  void begin_local_round(double now_s);
  int awaitable() const { return awaitable_; }
  double start_s() const { return start_s_; }
  // The backup policy's m for this iteration, clamped to what can be awaited.
  void decide(double now_s);
  const Decision& decision() const { return decision_; }
  void set_awaited(int awaited) {
    decision_ = {};
    decision_.awaited = awaited;
  }
  int relaxed_floor() const { return relaxed_floor_; }
  const std::vector<int>& tree_slots() const { return tree_slots_; }
  // keep_connected: the tree neighbours that are neither fresh nor gone (slot indices).
  std::vector<int> missing_tree_neighbours(double now_s) const;
  std::optional<double>& relax_at() { return relax_at_; }
  ArrivalWindow& arrivals() { return arrivals_; }
  const ArrivalWindow& arrivals() const { return arrivals_; }
  double learning_rate() const;
  // Where this iteration's gradient is taken (what momentum and weight decay read).
  const Params& gradient_point() const { return gradient_point_; }
  void set_gradient_point(Params at) { gradient_point_ = std::move(at); }
  // The step's direction in place of the gradient `step` (its model values): momentum and
  // weight decay at the gradient point; the gradient itself without them.
  void to_direction(std::span<float> step);
  bool has_local_step() const { return local_step_.has_value(); }

  // --- what goes out
  // SendParams of x with tag k, remembered for a neighbour that comes back.
  void send(std::vector<PeerId> to, Params params, Actions& out);
  std::int64_t last_sent_tag() const { return last_sent_tag_; }
  const Params& last_sent() const { return last_sent_; }
  void arm(double at_s, Actions& out);
  void disarm_if_due(double now_s);
  void arm_silence_timer(std::span<const int> slots, double now_s, Actions& out);
  // A buffer for a new model: the runtime's (BufferSource), or one of the core's own that
  // nobody else holds any more.
  std::shared_ptr<MutableParamBuffer> recycled_buffer();
  void set_buffer_source(BufferSource source) { buffer_source_ = std::move(source); }
  // A departure the runtime has not been told of yet (report_departures looks for them).
  void note_departure() { unreported_departure_ = true; }
  bool take_unreported_departure() { return std::exchange(unreported_departure_, false); }

 private:
  void await_spanning_tree();

  PeerId self_;
  std::shared_ptr<const topology::TopologySchedule> schedule_;
  ProtocolConfig config_;
  std::unique_ptr<BackupPolicy> policy_;
  std::vector<PeerId> neighbours_;
  std::vector<Slot> slots_;
  std::vector<PeerId> receivers_;  // of any round, sorted: whom a comeback is resent to
  std::vector<PeerId> contacts_;   // neighbours_ and receivers_, merged
  std::vector<int> tree_slots_;    // keep_connected: slots of the spanning tree's neighbours
  int relaxed_floor_ = 0;          // this iteration's m_min, raised to the tree neighbours
  std::int64_t last_sent_tag_ = -1;
  Params last_sent_;

  std::int64_t k_ = 0;
  Params x_;
  topology::RoundPeers round_;
  std::vector<int> round_slots_;
  Decision decision_;
  int awaitable_ = 0;
  double start_s_ = 0;
  double silence_from_s_ = 0;  // local_steps: when the current iteration began
  std::optional<double> relax_at_;
  Params gradient_point_;
  std::optional<learning::Sgd> local_step_;  // with momentum or weight decay
  ArrivalWindow arrivals_;
  std::optional<double> armed_at_s_;
  DropCounts dropped_;
  static constexpr std::size_t kMaxSpareBuffers = 4;
  std::vector<std::shared_ptr<VectorParams>> spare_buffers_;
  BufferSource buffer_source_;
  std::function<bool(const Slot&)> expected_;  // empty: every neighbour is expected to speak
  bool unreported_departure_ = false;
};

}  // namespace fastk::consensus
