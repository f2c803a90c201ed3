#include "consensus/peer_protocol.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "consensus/comeback.h"

namespace fastk::consensus {

UpdateOrder parse_update_order(const std::string& name) {
  if (name == "combine_then_adapt") return UpdateOrder::kCombineThenAdapt;
  if (name == "adapt_then_combine") return UpdateOrder::kAdaptThenCombine;
  throw std::invalid_argument("unknown update order \"" + name +
                              "\"; expected combine_then_adapt or adapt_then_combine");
}

std::string to_string(UpdateOrder order) {
  return order == UpdateOrder::kCombineThenAdapt ? "combine_then_adapt" : "adapt_then_combine";
}

ValidationScore parse_validation_score(const std::string& name) {
  if (name == "loss") return ValidationScore::kLoss;
  if (name == "first_order") return ValidationScore::kFirstOrder;
  throw std::invalid_argument("unknown validation score \"" + name +
                              "\"; expected loss or first_order");
}

std::string to_string(ValidationScore score) {
  switch (score) {
    case ValidationScore::kLoss:
      return "loss";
    case ValidationScore::kFirstOrder:
      return "first_order";
  }
  return "?";
}

PeerProtocol::PeerProtocol(PeerId self, std::shared_ptr<const topology::TopologySchedule> schedule,
                           ProtocolConfig config, Params initial)
    : core_(self, std::move(schedule), std::move(config), std::move(initial)),
      variant_(make_mixing_variant(core_)) {}

void PeerProtocol::resume_at(std::int64_t iteration) {
  if (phase_ != Phase::kNotStarted) throw std::logic_error("PeerProtocol: resumed once started");
  if (const auto why = why_no_comeback(core_.config(), Comeback::kFromCheckpoint)) {
    throw std::invalid_argument(*why);
  }
  if (iteration < 0 || iteration > core_.config().iterations) {
    throw std::invalid_argument("PeerProtocol: cannot resume at iteration " +
                                std::to_string(iteration) + " of a run of " +
                                std::to_string(core_.config().iterations));
  }
  core_.set_k(iteration);
}

void PeerProtocol::start(double now_s, Actions& out) {
  if (phase_ != Phase::kNotStarted) throw std::logic_error("PeerProtocol: started twice");
  for (auto& slot : core_.slots()) slot.last_heard_s = now_s;
  if (core_.k() >= core_.config().iterations) {
    phase_ = Phase::kFinished;
    out.push_back(Finished{core_.k()});
    return;
  }
  phase_ = Phase::kRunning;
  if (core_.k() > 0) core_.refresh_oldest_fresh();  // models kept from a resumed peer's start-up
  gradient_ready_ = false;
  variant_->begin(now_s, out);
}

void PeerProtocol::join(double now_s, Actions& out) {
  if (phase_ != Phase::kNotStarted) throw std::logic_error("PeerProtocol: started twice");
  if (const auto why = why_no_comeback(core_.config(), Comeback::kJoining)) {
    throw std::invalid_argument(*why);
  }
  for (auto& slot : core_.slots()) slot.last_heard_s = now_s;
  phase_ = Phase::kJoining;
  if (core_.config().silence_timeout_s > 0) {
    join_until_s_ = now_s + core_.config().silence_timeout_s;
    core_.arm(*join_until_s_, out);
  }
  try_join(now_s, out);
}

// The model: the plain average of the newest model of each neighbour heard; the iteration:
// the newest of their tags, so that what it sends is fresh for all of them at once.
void PeerProtocol::try_join(double now_s, Actions& out) {
  std::vector<const Slot*> heard;
  for (const Slot& slot : core_.slots()) {
    if (slot.tag >= 0) heard.push_back(&slot);
  }
  const bool all = heard.size() == core_.slots().size();
  const bool waited = join_until_s_ && now_s >= *join_until_s_;
  if (waited && heard.empty()) {
    // Neighbours that have finished, or are gone too, send nothing: there is no run to join.
    throw std::runtime_error("peer " + std::to_string(core_.self()) +
                             " cannot rejoin: no neighbour sent a model within the silence "
                             "timeout (have they all finished or left?)");
  }
  if (heard.empty() || !(all || waited)) return;
  std::shared_ptr<MutableParamBuffer> mean = core_.recycled_buffer();
  const std::span<float> values = mean->mutable_values();
  std::fill(values.begin(), values.end(), 0.0f);
  std::int64_t newest = 0;
  for (const Slot* slot : heard) {
    const auto theirs = slot->params->values();
    for (std::size_t p = 0; p < values.size(); ++p) values[p] += theirs[p];
    newest = std::max(newest, slot->tag);
  }
  const float share = 1.0f / static_cast<float>(heard.size());
  for (float& v : values) v *= share;
  core_.set_x(std::move(mean));
  core_.set_k(newest);
  phase_ = Phase::kRunning;
  core_.refresh_oldest_fresh();
  begin_or_block(now_s, out);
}

std::vector<float> PeerProtocol::handle(double now_s, Input input, Actions& out) {
  using Reusable = std::vector<float>;  // only a gradient gives memory back
  const ActionHandlers dispatch{
      [&](ModelArrived& m) -> Reusable {
        on_message(now_s, m, out);
        return {};
      },
      [&](CodedGradientArrived& m) -> Reusable {
        if (variant_->take(now_s, m, out)) reevaluate(now_s, out);
        return {};
      },
      [&](DifferenceArrived& m) -> Reusable {
        if (variant_->take(now_s, m, out)) reevaluate(now_s, out);
        return {};
      },
      [&](AveragingArrived& m) -> Reusable {
        on_averaging(now_s, m, out);
        return {};
      },
      [&](NeighbourLeft& m) -> Reusable {
        on_neighbour_left(now_s, m.from, out);
        return {};
      },
      [&](NeighbourBack& m) -> Reusable {
        on_neighbour_back(now_s, m.peer, out);
        return {};
      },
      [&](GradientDone& g) -> Reusable {
        return on_gradient_done(now_s, std::move(g.gradient), g.stats, out);
      },
      [&](ValidationDone& v) -> Reusable {
        if (phase_ == Phase::kRunning && variant_->validation_done(now_s, v, out)) {
          reevaluate(now_s, out);
        }
        return {};
      },
      [&](TimerFired&) -> Reusable {
        core_.disarm_if_due(now_s);
        reevaluate(now_s, out);
        return {};
      },
  };
  return std::visit(dispatch, input);
}

void PeerProtocol::on_message(double now_s, const ModelArrived& m, Actions& out) {
  if (const auto cause = core_.unusable(m.from, m.tag, m.params, core_.parameters())) {
    core_.drops().add(*cause);
    return;
  }
  const int s = core_.slot_of(m.from);
  Slot& slot = core_.slot(s);
  core_.heard_from(slot, now_s);
  core_.arrivals().message(m.from, m.tag, now_s);
  const std::int64_t stale_before = core_.k() - core_.config().staleness;
  if (m.tag > slot.tag) {  // a repeated or reordered old one is no news
    slot.bytes_since_update += static_cast<std::int64_t>(m.params->values().size_bytes());
  }
  if (m.tag >= stale_before && slot.oldest_fresh_tag < stale_before) {
    slot.oldest_fresh_tag = m.tag;
    slot.oldest_fresh = m.params;
  }
  if (m.tag > slot.tag) {
    variant_->took_model(s, m.tag, m.params);
    slot.tag = m.tag;
    slot.params = m.params;
  }
  reevaluate(now_s, out);
}

void PeerProtocol::on_averaging(double now_s, const AveragingArrived& m, Actions& out) {
  const bool in_play = phase_ == Phase::kRunning || phase_ == Phase::kGapBlocked;
  if (!variant_->take(now_s, m, in_play, out)) return;
  if (phase_ == Phase::kFinished || phase_ == Phase::kStopped) {
    variant_->settle();  // no update will come to add it
    return;
  }
  reevaluate(now_s, out);
}

void PeerProtocol::on_neighbour_back(double now_s, PeerId peer, Actions& out) {
  variant_->neighbour_back(peer);
  const int s = core_.slot_of(peer);
  if (s >= 0) core_.heard_from(core_.slot(s), now_s);
  const auto& receivers = core_.receivers();
  if (core_.last_sent() && std::binary_search(receivers.begin(), receivers.end(), peer)) {
    out.push_back(SendParams{{peer}, core_.last_sent_tag(), core_.last_sent()});
  }
  reevaluate(now_s, out);
}

void PeerProtocol::on_neighbour_left(double now_s, PeerId peer, Actions& out) {
  const int s = core_.slot_of(peer);
  if (s < 0) return;
  Slot& slot = core_.slot(s);
  // A BYE after a reported silence is a departure of its own.
  if (!slot.departed) slot.reported_gone = false;
  slot.departed = true;
  core_.note_departure();
  reevaluate(now_s, out);
}

std::vector<float> PeerProtocol::on_gradient_done(double now_s, std::vector<float> gradient,
                                                  const GradientStats& stats, Actions& out) {
  if (phase_ != Phase::kRunning || gradient_ready_) {
    throw std::logic_error("PeerProtocol: on_gradient_done without an outstanding gradient");
  }
  const std::size_t expected = variant_->gradient_size();
  if (gradient.size() != expected) {
    throw std::logic_error("PeerProtocol: gradient has " + std::to_string(gradient.size()) +
                           " values, expected " + std::to_string(expected));
  }
  if (!all_finite(gradient)) {
    std::ostringstream message;
    message << "peer " << core_.self() << ": the gradient of iteration " << core_.k()
            << " has a NaN or infinite value: training diverged (lower optimizer.lr, now "
            << core_.config().optimizer.lr << ")";
    throw std::runtime_error(message.str());
  }
  report_departures(now_s, out);
  gradient_ready_ = true;
  gradient_done_s_ = now_s;
  core_.arrivals().gradient_done(core_.k(), now_s);
  std::vector<float> reusable = variant_->gradient_done(now_s, std::move(gradient), stats, out);
  try_update(now_s, out);
  return reusable;
}

std::vector<float> PeerProtocol::release_gradient() {
  // With no gradient outstanding, nothing reads a kept one again.
  if (gradient_ready_) return {};
  return variant_->release_gradient();
}

void PeerProtocol::stop() {
  if (phase_ == Phase::kRunning || phase_ == Phase::kGapBlocked || phase_ == Phase::kJoining) {
    phase_ = Phase::kStopped;
  }
  variant_->settle();
}

void PeerProtocol::begin_or_block(double now_s, Actions& out) {
  if (core_.config().max_gap > 0) {
    std::vector<int> lagging;
    for (PeerId j : core_.schedule().round(core_.self(), core_.k()).receive_from) {
      const int s = core_.slot_of(j);
      const Slot& slot = core_.slot(s);
      if (!core_.gone(slot, now_s) && slot.tag < core_.k() - core_.config().max_gap) {
        lagging.push_back(s);
      }
    }
    if (!lagging.empty()) {
      phase_ = Phase::kGapBlocked;
      core_.arm_silence_timer(lagging, now_s, out);
      return;
    }
  }
  phase_ = Phase::kRunning;
  gradient_ready_ = false;
  variant_->begin(now_s, out);
}

void PeerProtocol::try_update(double now_s, Actions& out) {
  if (!gradient_ready_) return;
  if (const auto plan = variant_->ready(now_s, out)) update(now_s, *plan, out);
}

void PeerProtocol::update(double now_s, const UpdatePlan& plan, Actions& out) {
  std::shared_ptr<MutableParamBuffer> next = core_.recycled_buffer();
  IterationRecord record;
  variant_->mix(now_s, plan, next->mutable_values(), record);
  const Decision& decision = core_.decision();
  record.peer = core_.self();
  record.iteration = core_.k();
  record.neighbours = static_cast<int>(core_.round().receive_from.size());
  record.awaitable = core_.awaitable();
  record.awaited = decision.awaited;
  record.required = plan.required;
  record.backups = record.neighbours - decision.awaited;
  record.start_s = core_.start_s();
  record.gradient_done_s = gradient_done_s_;
  record.update_s = now_s;
  record.estimates = decision.estimates;
  record_neighbours(record);
  out.push_back(IterationCompleted{std::move(record)});

  core_.set_x(std::move(next));
  core_.set_k(core_.k() + 1);
  core_.refresh_oldest_fresh();
  if (core_.k() >= core_.config().iterations) {
    phase_ = Phase::kFinished;
    out.push_back(Finished{core_.k()});
    return;
  }
  begin_or_block(now_s, out);
}

void PeerProtocol::record_neighbours(IterationRecord& record) {
  const auto delays = core_.arrivals().delays(core_.k());
  const auto& round = core_.round();
  for (std::size_t r = 0; r < round.receive_from.size(); ++r) {
    const int s = core_.round_slots()[r];
    NeighbourRecord n;
    n.neighbour = round.receive_from[r];
    if (r < delays.size() && delays[r]) {
      n.arrival_s = core_.start_s() + *delays[r] - gradient_done_s_;
    }
    const auto u = std::find(record.used.begin(), record.used.end(), n.neighbour);
    n.used = u != record.used.end();
    const std::int64_t used_tag =
        n.used ? record.used_tags[static_cast<std::size_t>(u - record.used.begin())] : -1;
    const std::int64_t tag = variant_->recorded_tag(s, n.used, used_tag);
    if (tag >= 0) n.tag_lag = static_cast<double>(core_.k() - tag);
    n.bytes = std::exchange(core_.slot(s).bytes_since_update, 0);
    record.neighbour_records.push_back(n);
  }
}

void PeerProtocol::report_departures(double now_s, Actions& out) {
  if (phase_ == Phase::kNotStarted) return;  // silence counts from start()
  // Without a silence timeout only a BYE makes a departure: nothing to look for otherwise
  // (the simulator's case, on every event).
  const bool unreported = core_.take_unreported_departure();
  if (core_.config().silence_timeout_s <= 0 && !unreported) return;
  for (std::size_t s = 0; s < core_.slots().size(); ++s) {
    Slot& slot = core_.slots()[s];
    if (slot.reported_gone || !core_.gone(slot, now_s)) continue;
    slot.reported_gone = true;
    out.push_back(NeighbourGone{core_.neighbours()[s], core_.k(), slot.departed,
                                slot.parted && !slot.departed});
  }
}

void PeerProtocol::reevaluate(double now_s, Actions& out) {
  report_departures(now_s, out);
  if (phase_ == Phase::kGapBlocked) {
    begin_or_block(now_s, out);
  } else if (phase_ == Phase::kJoining) {
    try_join(now_s, out);
  } else if (phase_ == Phase::kRunning) {
    try_update(now_s, out);
  }
}

}  // namespace fastk::consensus
