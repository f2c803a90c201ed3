#include "consensus/iteration_core.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

namespace fastk::consensus {
namespace {

void check_config(const ProtocolConfig& config) {
  if (config.iterations < 0) throw std::invalid_argument("PeerProtocol: iterations < 0");
  if (config.m_min < 0) throw std::invalid_argument("PeerProtocol: m_min < 0");
  if (config.staleness < 0) throw std::invalid_argument("PeerProtocol: staleness < 0");
  if (config.local_steps < 1) throw std::invalid_argument("PeerProtocol: local_steps < 1");
  if (config.max_gap < 0) throw std::invalid_argument("PeerProtocol: max_gap < 0");
  if (config.silence_timeout_s < 0) {
    throw std::invalid_argument("PeerProtocol: silence_timeout_s < 0");
  }
}

}  // namespace

IterationCore::IterationCore(PeerId self,
                             std::shared_ptr<const topology::TopologySchedule> schedule,
                             ProtocolConfig config, Params initial)
    : self_(self),
      schedule_(std::move(schedule)),
      config_(std::move(config)),
      policy_(make_policy(config_.policy)),
      x_(std::move(initial)),
      arrivals_(config_.policy.window) {
  if (!schedule_) throw std::invalid_argument("PeerProtocol: no topology schedule");
  if (self_ < 0 || self_ >= schedule_->size()) {
    throw std::invalid_argument("PeerProtocol: peer id " + std::to_string(self_) + " outside [0, " +
                                std::to_string(schedule_->size()) + ")");
  }
  if (!x_) throw std::invalid_argument("PeerProtocol: no initial parameters");
  check_config(config_);
  if (learning::has_direction_state(config_.optimizer)) {
    local_step_.emplace(config_.optimizer, x_->values().size(), config_.iterations);
  }
  neighbours_ = topology::peers_over_rounds(*schedule_, self_, true);
  receivers_ = topology::peers_over_rounds(*schedule_, self_, false);
  std::set_union(neighbours_.begin(), neighbours_.end(), receivers_.begin(), receivers_.end(),
                 std::back_inserter(contacts_));
  slots_.resize(neighbours_.size());
  if (config_.keep_connected) await_spanning_tree();
}

void IterationCore::await_spanning_tree() {
  if (config_.coding.scheme != coding::Scheme::kNone) {
    throw std::invalid_argument(
        "keep_connected and coding exclude each other: a coded neighbourhood waits until its "
        "gradient decodes, not for chosen neighbours");
  }
  const auto tree = schedule_->spanning_tree_neighbours(self_);
  if (!tree) {
    throw std::invalid_argument(
        "keep_connected needs a static graph: on a time-varying schedule the neighbours change "
        "every round");
  }
  for (PeerId j : *tree) tree_slots_.push_back(slot_of(j));
}

int IterationCore::slot_of(PeerId peer) const {
  const auto it = std::lower_bound(neighbours_.begin(), neighbours_.end(), peer);
  if (it == neighbours_.end() || *it != peer) return -1;
  return static_cast<int>(it - neighbours_.begin());
}

bool IterationCore::gone(const Slot& slot, double now_s) const {
  if (slot.departed || slot.parted) return true;
  if (expected_ && !expected_(slot)) return false;
  return config_.silence_timeout_s > 0 && now_s - silent_since(slot) >= config_.silence_timeout_s;
}

double IterationCore::silent_since(const Slot& slot) const {
  // With local steps neighbours are silent between gossips by design: silence counts from the
  // start of the current iteration at the earliest.
  return config_.local_steps > 1 ? std::max(slot.last_heard_s, silence_from_s_) : slot.last_heard_s;
}

const Params& IterationCore::mixed(const Slot& slot) const {
  const bool exact = policy_->mixes_exact_iteration();
  const bool usable = slot.oldest_fresh && slot.oldest_fresh_tag >= k_ - config_.staleness;
  return exact && usable ? slot.oldest_fresh : slot.params;
}

std::int64_t IterationCore::mixed_tag(const Slot& slot) const {
  return mixed(slot) == slot.params ? slot.tag : slot.oldest_fresh_tag;
}

void IterationCore::heard_from(Slot& slot, double now_s) {
  slot.last_heard_s = now_s;
  slot.departed = false;
  slot.reported_gone = false;
}

void IterationCore::refresh_oldest_fresh() {
  for (Slot& slot : slots_) {
    if ((!slot.oldest_fresh || slot.oldest_fresh_tag < k_ - config_.staleness) && fresh(slot)) {
      slot.oldest_fresh_tag = slot.tag;
      slot.oldest_fresh = slot.params;
    }
  }
}

// Tags at or past the run's length come from no peer of this run: a huge tag would stay
// "newest" (and fresh) for the rest of the run. A single NaN mixed in would make this
// model, and through it every model of the run, NaN for good.
std::optional<DropCause> IterationCore::unusable(PeerId from, std::int64_t tag,
                                                 const Params& params, std::size_t size) const {
  if (slot_of(from) < 0) return DropCause::kNotNeighbour;
  if (tag < 0 || tag >= config_.iterations) return DropCause::kTagOutOfRange;
  if (!params || params->values().size() != size) return DropCause::kWrongSize;
  if (!params->all_finite()) return DropCause::kNonFinite;
  return std::nullopt;
}

void IterationCore::begin_round(double now_s) {
  round_ = schedule_->round(self_, gossip_round());
  silence_from_s_ = now_s;
  round_slots_.clear();
  std::vector<bool> already(round_.receive_from.size());
  awaitable_ = 0;
  for (std::size_t r = 0; r < round_.receive_from.size(); ++r) {
    const int s = slot_of(round_.receive_from[r]);
    round_slots_.push_back(s);
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    already[r] = fresh(slot);
    if (already[r] || !gone(slot, now_s)) ++awaitable_;
  }
  start_s_ = now_s;
  relax_at_.reset();
  armed_at_s_.reset();
  arrivals_.begin(k_, now_s, round_.receive_from, already);
}

void IterationCore::begin_local_round(double now_s) {
  round_ = topology::RoundPeers{};
  round_slots_.clear();
  awaitable_ = 0;
  decision_ = {};
  start_s_ = now_s;
  silence_from_s_ = now_s;
  relax_at_.reset();
  armed_at_s_.reset();
}

void IterationCore::decide(double now_s) {
  // keep_connected: the policy chooses how many more than the tree neighbours to await.
  const auto tree_awaitable = std::count_if(tree_slots_.begin(), tree_slots_.end(), [&](int s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    return fresh(slot) || !gone(slot, now_s);
  });
  relaxed_floor_ = std::max(config_.m_min, static_cast<int>(tree_awaitable));
  PolicyInput input;
  input.iteration = k_;
  input.neighbours = awaitable_;
  input.m_min = std::min(relaxed_floor_, awaitable_);
  input.now_s = now_s;
  // With momentum mu a steady gradient moves the model by lr / (1 - mu) per iteration.
  input.learning_rate = learning_rate() / (1 - config_.optimizer.momentum);
  input.arrivals = &arrivals_;
  decision_ = policy_->decide(input);
  decision_.awaited = std::clamp(decision_.awaited, input.m_min, awaitable_);
}

std::vector<int> IterationCore::missing_tree_neighbours(double now_s) const {
  std::vector<int> missing;
  for (int s : tree_slots_) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (!fresh(slot) && !gone(slot, now_s)) missing.push_back(s);
  }
  return missing;
}

double IterationCore::learning_rate() const {
  return learning::learning_rate(config_.optimizer, k_, config_.iterations);
}

void IterationCore::to_direction(std::span<float> step) {
  const std::span<const float> at = gradient_point_->values();
  local_step_->direction(at, step.first(at.size()));
}

void IterationCore::send(std::vector<PeerId> to, Params params, Actions& out) {
  last_sent_tag_ = k_;
  last_sent_ = params;
  out.push_back(SendParams{std::move(to), k_, std::move(params)});
}

void IterationCore::arm(double at_s, Actions& out) {
  if (armed_at_s_ && *armed_at_s_ <= at_s) return;  // an earlier timer will re-evaluate
  armed_at_s_ = at_s;
  out.push_back(ArmTimer{at_s});
}

void IterationCore::disarm_if_due(double now_s) {
  if (armed_at_s_ && now_s >= *armed_at_s_) armed_at_s_.reset();
}

void IterationCore::arm_silence_timer(std::span<const int> slots, double now_s, Actions& out) {
  if (config_.silence_timeout_s <= 0 || slots.empty()) return;
  double earliest = silent_since(slots_[static_cast<std::size_t>(slots[0])]);
  for (int s : slots) {
    earliest = std::min(earliest, silent_since(slots_[static_cast<std::size_t>(s)]));
  }
  arm(std::max(now_s, earliest + config_.silence_timeout_s), out);
}

std::shared_ptr<MutableParamBuffer> IterationCore::recycled_buffer() {
  const std::size_t size = parameters();
  if (buffer_source_) {
    if (auto buffer = buffer_source_()) {
      if (buffer->values().size() != size) {
        throw std::logic_error("PeerProtocol: the buffer source gave " +
                               std::to_string(buffer->values().size()) + " values, expected " +
                               std::to_string(size));
      }
      return buffer;
    }
  }
  // A buffer nobody else holds any more (neighbours' mailboxes, sends in flight) is
  // overwritten instead of allocating and zero-filling a fresh model every iteration.
  for (auto& buffer : spare_buffers_) {
    if (buffer.use_count() == 1) {
      // The last other holder may have let go on another thread (a zero-copy send): this
      // fence pairs with the release in its reference-count decrement.
      std::atomic_thread_fence(std::memory_order_acquire);
      return buffer;
    }
  }
  auto buffer = std::make_shared<VectorParams>(std::vector<float>(size));
  if (spare_buffers_.size() < kMaxSpareBuffers) spare_buffers_.push_back(buffer);
  return buffer;
}

}  // namespace fastk::consensus
