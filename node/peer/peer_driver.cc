#include "node/peer/peer_driver.h"

#include <algorithm>
#include <iostream>
#include <iterator>
#include <limits>

#include "node/launch/progress.h"
#include "node/launch/wall_clock.h"
#include "node/wire/coded_payload.h"
#include "node/wire/compressed_payload.h"

namespace fastk::node::peer {
namespace {

// A coded gradient of the protocol as a CODED_GRADIENT message (inbound.cc reads it back).
wire::EncodedMessage coded_message(int self, const consensus::SendCoded& s) {
  const consensus::CodedGradient& part = *s.coded;
  const std::vector<std::uint32_t> covers(part.covers.begin(), part.covers.end());
  const std::vector<std::uint32_t> role(part.role.begin(), part.role.end());
  return wire::encode_coded_gradient(static_cast<wire::PeerId>(self), s.tag, covers, role,
                                     part.compute_s, part.gradient->values());
}

std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int>(std::ceil(std::max(0.0, seconds) * 1000)));
}

// The contacts this peer only sends to: they send it nothing until their BYE.
std::vector<int> send_only(const consensus::PeerProtocol& protocol) {
  std::vector<int> only;
  std::set_difference(protocol.contacts().begin(), protocol.contacts().end(),
                      protocol.known_neighbours().begin(), protocol.known_neighbours().end(),
                      std::back_inserter(only));
  return only;
}

}  // namespace

PeerDriver::PeerDriver(DriverSettings settings, DriverParts parts)
    : settings_(std::move(settings)),
      parts_(parts),
      rendezvous_(settings_.self, parts.protocol.contacts(), settings_.run,
                  send_only(parts.protocol)),
      outbound_(parts.link, parts.protocol.models_kept_queued()),
      inbox_(parts.delays, settings_.self),
      snapshots_(settings_.epoch_s, settings_.eval_interval_s),
      report_(settings_.self, settings_.iterations, settings_.origin) {
  if (!parts_.shared_models) {  // a peer without shared memory: every SHARED_MODEL is bad
    no_shared_models_ = std::make_unique<SharedModelReader>(settings_.run.run_id, settings_.self, 0,
                                                            std::map<int, std::string>{});
  }
  shared_models_ = parts_.shared_models ? parts_.shared_models : no_shared_models_.get();
}

double PeerDriver::now_s() const {
  return std::chrono::duration<double>(Clock::now() - settings_.origin).count();
}

PeerReport PeerDriver::run() {
  // Back from the checkpoint of its last update (killed during its goodbye): its neighbours
  // may have left, and it has nothing to send them.
  if (settings_.iterations > 0 && parts_.protocol.iteration() >= settings_.iterations) {
    iterate();
    print_progress(true);
  } else if (handshake() && wait_for_start()) {
    iterate();
    print_progress(true);
    say_goodbye();
  }
  report_.count_link(parts_.link, outbound_, *shared_models_);
  return report_.take();
}

// Sends HELLO until every neighbour has been heard from. False if stopped meanwhile.
bool PeerDriver::handshake() {
  // From the origin (the process start, for `fastk node`): loading the data counts too.
  const double deadline_s = settings_.startup_timeout_s;
  while (!rendezvous_.everyone_heard()) {
    if (parts_.requests.stop) return false;
    if (now_s() >= deadline_s) throw std::runtime_error(startup_failure());
    const auto hello = rendezvous_.hello(wire::MessageType::kHello, 0);
    for (int j : rendezvous_.hellos_due(now_s())) outbound_.send(j, Outbound::kControl, hello);
    receive(ms(std::min(rendezvous_.next_hello_s(), deadline_s) - now_s()));
  }
  return true;
}

// Who was not heard from; and, when the gate refused connections meanwhile, the likely
// reason: neighbours holding keys of another folder (curve_gate.h).
std::string PeerDriver::startup_failure() const {
  std::string why = rendezvous_.missing(settings_.startup_timeout_s, settings_.endpoint_of);
  std::string refused;
  for (const auto& [cause, count] : parts_.link.refused_connections()) {
    refused += (refused.empty() ? "" : ", ") + std::to_string(count) + " " + cause;
  }
  if (!refused.empty()) {
    why += "; meanwhile this peer refused connections (" + refused +
           "): do all peers use keys of one folder ([security] keys, --keys)?";
  }
  return why;
}

// With wait_for_start: "@ready" for the launcher, then answer HELLOs until it says go.
// False if stopped meanwhile; throws after startup_timeout_s without a go.
bool PeerDriver::wait_for_start() {
  if (!settings_.wait_for_start) return true;
  if (settings_.progress) *settings_.progress << kReadyLine << std::endl;
  const double deadline_s = now_s() + settings_.startup_timeout_s;
  while (!parts_.requests.start) {
    if (parts_.requests.stop) return false;
    if (now_s() >= deadline_s) {
      throw std::runtime_error("peer " + std::to_string(settings_.self) +
                               " was ready but not told to start within startup_timeout_ms = " +
                               std::to_string(std::lround(settings_.startup_timeout_s * 1000)) +
                               " (did another peer fail to start? see its log)");
    }
    outbound_.flush();
    receive(std::chrono::milliseconds(50));
  }
  return true;
}

void PeerDriver::iterate() {
  began_s_ = now_s();
  const double began_unix_s = unix_now_s();
  const IterationStart start = report_.began(began_s_, began_unix_s, settings_.began_before);
  if (!settings_.began_before && parts_.hooks.on_began) parts_.hooks.on_began(start);
  if (parts_.hooks.on_arrival) {
    for (const auto& a : early_arrivals_) {
      parts_.hooks.on_arrival(parts_.protocol.iteration(), a.from, a.tag,
                              a.at_s - report_.began_s(), a.bye);
    }
  }
  early_arrivals_.clear();
  budget_from_s_ = start.monotonic_s -
                   std::chrono::duration<double>(settings_.origin.time_since_epoch()).count();
  rendezvous_.started(began_s_);
  phase_ = Phase::kIterating;
  parts_.checkpoints.start(began_s_);
  consensus::Actions actions;
  if (settings_.join) {
    parts_.protocol.join(began_s_, actions);
  } else {
    parts_.protocol.start(began_s_, actions);
    report_.starts_at(parts_.protocol.iteration());  // 0, or a checkpoint's
  }
  // The model at the instant the peer starts in is the initial one (or its checkpoint's):
  // saved, so that the mean model of every later instant is known even when the peers start
  // in different instants. A joining peer's is saved once it has joined.
  snapshots_.start_at(began_unix_s);
  take_due_snapshot();
  execute(actions);
  const RunRequests& requests = parts_.requests;
  bool joining = settings_.join;
  while (!parts_.protocol.finished() && !requests.stop && !requests.finish && !out_of_time()) {
    step(next_wait_ms());
    if (joining && !parts_.protocol.joining()) {
      joining = false;
      report_.starts_at(parts_.protocol.iteration());
      std::cerr << "peer " << settings_.self << ": joined at iteration "
                << parts_.protocol.iteration() << std::endl;
    }
    take_due_snapshot();
    print_progress(false);
  }
  end_of_iterating();
}

// From here on the protocol gets nothing: a peer that stopped before its last iteration
// (time budget, target, signal) would otherwise go on iterating on the models still arriving
// during the goodbye, sending models after its BYE, which brings it back into its
// neighbours' awaited sets just before it goes for good.
void PeerDriver::end_of_iterating() {
  phase_ = Phase::kGoodbye;
  const bool done = parts_.protocol.finished();
  if (!done) parts_.protocol.stop();
  // Messages held back by injected link delays come now or never.
  while (auto held = inbox_.release(std::numeric_limits<double>::infinity())) {
    averaging_in_goodbye(*held);
  }
  report_.ended(!parts_.requests.stop || done, done                     ? "iterations"
                                               : out_of_time()          ? "duration"
                                               : parts_.requests.finish ? "target"
                                               : parts_.requests.leave  ? "left"
                                                                        : "signal");
  // Only a peer still iterating leaves: one that finished ends as it would have.
  if (done) parts_.requests.leave = false;
}

void PeerDriver::step(int wait_ms) {
  outbound_.flush();
  receive(std::chrono::milliseconds(outbound_.pending() ? std::min(wait_ms, 1) : wait_ms));
  while (auto message = inbox_.release(now_s())) hand_to_protocol(std::move(*message));
  consensus::Actions actions;
  if (auto done = parts_.compute.poll()) {
    std::visit(
        consensus::ActionHandlers{
            [&](ComputedGradient& g) {
              report_.gradient_done(g.compute_s, g.injected_s, g.step.loss);
              parts_.compute.recycle(parts_.protocol.handle(
                  now_s(),
                  consensus::GradientDone{std::move(g.step.result.gradient), g.step.result.stats},
                  actions));
            },
            [&](ComputedLosses& l) {
              report_.validation_done(l.compute_s);
              parts_.protocol.handle(
                  now_s(), consensus::ValidationDone{l.iteration, std::move(l.losses)}, actions);
            }},
        *done);
  }
  bool due = false;
  while (!timers_.empty() && timers_.top() <= now_s()) {
    timers_.pop();
    due = true;
  }
  if (due) {
    const double now = now_s();
    if (parts_.hooks.on_timer && phase_ == Phase::kIterating) {
      parts_.hooks.on_timer(parts_.protocol.iteration(), now - report_.began_s());
    }
    parts_.protocol.handle(now, consensus::TimerFired{}, actions);
  }
  execute(actions);
}

// Takes at most one message (more wait in the link for the next call).
void PeerDriver::receive(std::chrono::milliseconds timeout) {
  auto got = parts_.link.receive(timeout);
  take_due_snapshot();  // an instant passed while waiting: the model before this message
  if (!got || !std::holds_alternative<transport::ReceivedMessage>(*got)) return;
  dispatch(std::get<transport::ReceivedMessage>(std::move(*got)));
}

void PeerDriver::dispatch(transport::ReceivedMessage message) {
  const int from = static_cast<int>(message.sender());
  const auto type = message.type();
  if (auto answer = rendezvous_.heard(from, type, now_s(), parts_.protocol.iteration())) {
    outbound_.send(from, Outbound::kControl, *answer);
  }
  const bool restarted = rendezvous_.came_back(from, type);
  if (restarted) shared_models_->forget(from);  // its slots are new objects, in any phase
  if (restarted && phase_ == Phase::kIterating) {
    consensus::Actions actions;
    parts_.protocol.handle(now_s(), consensus::NeighbourBack{from}, actions);
    execute(actions);
  }
  // Models that arrive during the start-up are kept by the protocol (a neighbour that got
  // the go first sends its x(0) at once); during the goodbye it gets only ad_psgd's messages.
  if (phase_ == Phase::kGoodbye) {
    const bool averaging = type == wire::MessageType::kAverageRequest ||
                           type == wire::MessageType::kAverageReply ||
                           type == wire::MessageType::kSharedAverageRequest ||
                           type == wire::MessageType::kSharedAverageReply;
    if (!averaging) return;  // nothing else is read: models, coded gradients, shared slots
    if (auto in = to_message(std::move(message), *shared_models_)) averaging_in_goodbye(*in);
    return;
  }
  auto in = to_message(std::move(message), *shared_models_);
  if (!in) return;
  if (auto now = inbox_.admit(std::move(*in), now_s())) hand_to_protocol(std::move(*now));
}

void PeerDriver::hand_to_protocol(consensus::Message message) {
  if (phase_ == Phase::kGoodbye) return;
  // One reading of the clock: the time recorded is the time the protocol was given.
  const double now = now_s();
  note_arrival(message, now);
  consensus::Actions actions;
  parts_.protocol.handle(now, consensus::as_input(std::move(message)), actions);
  execute(actions);
}

// When the protocol took each neighbour's message: with its sender's iteration starts, the
// time each link took, as `fastk sim --replay` re-enacts it.
void PeerDriver::note_arrival(const consensus::Message& message, double now) {
  if (!parts_.hooks.on_arrival) return;
  const int from = static_cast<int>(consensus::sender(message));
  const bool bye = std::holds_alternative<consensus::NeighbourLeft>(message);
  if (phase_ == Phase::kStartingUp) {
    early_arrivals_.push_back({from, consensus::tag_of(message), now, bye});
  } else {
    parts_.hooks.on_arrival(parts_.protocol.iteration(), from, consensus::tag_of(message),
                            now - report_.began_s(), bye);
  }
}

void PeerDriver::execute(const consensus::Actions& actions) {
  if (phase_ == Phase::kGoodbye) return;  // after the run loop nothing asked is carried out
  const consensus::ActionHandlers handle{
      [&](const consensus::SendParams& s) { send_model(s); },
      [&](const consensus::SendCoded& s) { send_coded(s); },
      [&](const consensus::SendAveraging& s) { send_averaging(s); },
      [&](const consensus::SendCompressed& s) { send_compressed(s); },
      [&](const consensus::StartGradient& g) {
        parts_.compute.recycle(parts_.protocol.release_gradient());  // into the last one's memory
        parts_.compute.submit(g);
      },
      [&](const consensus::StartValidation& v) { parts_.compute.submit(v); },
      [&](const consensus::ArmTimer& t) { timers_.push(t.at_s); },
      [&](const consensus::IterationCompleted& c) { completed(c.record); },
      [&](const consensus::NeighbourGone& gone) { departed(gone); },
      [](const consensus::Finished&) {},  // the run loop asks the protocol finished()
  };
  for (const auto& action : actions) std::visit(handle, action);
}

// With shared-memory slots the message names the slot the model was published in; otherwise
// it carries the model.
void PeerDriver::send_model(const consensus::SendParams& s) {
  const auto self = static_cast<wire::PeerId>(settings_.self);
  const auto slot = parts_.own_slots ? parts_.own_slots->publish(*s.params) : std::nullopt;
  const auto message = slot ? wire::encode_shared_model(self, s.tag, *slot, s.params)
                            : wire::encode_model(self, s.tag, s.params, s.params->values());
  if (slot) report_.shared_model_sent(s.to.size(), s.params->values().size_bytes());
  for (int j : s.to) outbound_.send(j, Outbound::kModel, message);
}

// One encoding for every neighbour; each difference is sent, never replaced by a newer one
// (a gap would part the neighbours' copies of this peer's estimate).
void PeerDriver::send_compressed(const consensus::SendCompressed& s) {
  const wire::EncodedMessage message = wire::encode_compressed_difference(
      static_cast<wire::PeerId>(settings_.self), s.tag, *s.difference);
  for (const auto j : s.to) {
    outbound_.send(static_cast<int>(j), Outbound::kCompressedDifference, message);
  }
}

void PeerDriver::send_coded(const consensus::SendCoded& s) {
  outbound_.send(s.to, Outbound::kCodedGradient, coded_message(settings_.self, s));
}

// Like a model: in a shared-memory slot when the values are in one (the protocol writes
// requests' models and replies into slots it gets from the buffer source), else over the
// socket. A decline carries no values.
void PeerDriver::send_averaging(const consensus::SendAveraging& s) {
  const bool request = s.step == consensus::AveragingStep::kRequest;
  const auto self = static_cast<wire::PeerId>(settings_.self);
  const auto slot =
      parts_.own_slots && s.params ? parts_.own_slots->publish(*s.params) : std::nullopt;
  if (slot) {
    report_.shared_model_sent(1, s.params->values().size_bytes());
    const auto type =
        request ? wire::MessageType::kSharedAverageRequest : wire::MessageType::kSharedAverageReply;
    outbound_.send(s.to, Outbound::kAveraging,
                   wire::encode_shared_model(self, s.tag, *slot, s.params, type));
    return;
  }
  const auto type = request ? wire::MessageType::kAverageRequest : wire::MessageType::kAverageReply;
  const std::span<const float> values = s.params ? s.params->values() : std::span<const float>{};
  outbound_.send(s.to, Outbound::kAveraging,
                 wire::encode_averaging(type, self, s.tag, s.params, values));
}

// In the goodbye the protocol (finished or stopped) takes only ad_psgd's messages: it declines
// requests, so an active neighbour need not wait for the BYE, and adds late replies, whose
// senders applied their halves. It asks for nothing else then: only its replies are sent.
void PeerDriver::averaging_in_goodbye(const consensus::Message& message) {
  const auto* averaging = std::get_if<consensus::AveragingArrived>(&message);
  if (averaging == nullptr) return;
  consensus::Actions actions;
  parts_.protocol.handle(now_s(), *averaging, actions);
  for (const auto& action : actions) {
    if (const auto* reply = std::get_if<consensus::SendAveraging>(&action)) send_averaging(*reply);
  }
}

void PeerDriver::completed(const consensus::IterationRecord& r) {
  const consensus::IterationRecord in_files = report_.iteration_done(r);
  if (parts_.hooks.on_iteration) parts_.hooks.on_iteration(in_files, report_.progress().loss);
  checkpoint_if_due();
}

// The protocol is at x(k+1) already (the update's actions come out together); the next
// gradient is not asked for yet, so the samplers are where x(k+1)'s gradient starts.
void PeerDriver::checkpoint_if_due() {
  if (!parts_.save_checkpoint || !parts_.checkpoints.enabled()) return;
  const std::int64_t k = parts_.protocol.iteration();
  // After the last update too: a peer killed during its goodbye then comes back finished
  // instead of looking for neighbours that have left.
  if (!parts_.checkpoints.due(k, now_s()) && !parts_.protocol.finished()) return;
  try {
    if (parts_.hooks.on_checkpoint) parts_.hooks.on_checkpoint();
    parts_.save_checkpoint(k, parts_.protocol.model()->values());
  } catch (const std::runtime_error& e) {
    // A lost checkpoint costs a restart its progress, not the peer its run.
    std::cerr << "peer " << settings_.self << ": checkpoint of iteration " << k
              << " not saved: " << e.what() << std::endl;
  }
  parts_.checkpoints.saved(now_s());
}

void PeerDriver::departed(const consensus::NeighbourGone& gone) {
  if (gone.lost_difference) {
    std::cerr << "peer " << settings_.self << ": a compressed difference from peer " << gone.peer
              << " was lost on the way (a reset connection?): its estimate here no longer "
                 "matches its own, so it is mixed and awaited no more"
              << std::endl;
  }
  report_.departed(gone.peer, gone.iteration,
                   gone.said_goodbye      ? "bye"
                   : gone.lost_difference ? "lost a difference"
                                          : "silent");
}

// Milliseconds until the next protocol timer, held message, snapshot, the end of the time
// budget or progress line (at most 1 s).
int PeerDriver::next_wait_ms() const {
  const double now = now_s();
  double wait = 1.0;
  if (!timers_.empty()) wait = std::min(wait, timers_.top() - now);
  if (auto release_s = inbox_.next_release_s()) wait = std::min(wait, *release_s - now);
  if (settings_.progress) wait = std::min(wait, next_progress_s_ - now);
  // While joining no snapshot is taken (take_due_snapshot): a passed instant must not spin.
  if (!parts_.protocol.joining()) wait = std::min(wait, snapshots_.seconds_to_next(unix_now_s()));
  if (settings_.duration_s > 0) wait = std::min(wait, budget_from_s_ + settings_.duration_s - now);
  return std::max(0, static_cast<int>(std::ceil(wait * 1000)));
}

bool PeerDriver::out_of_time() const {
  return settings_.duration_s > 0 && now_s() - budget_from_s_ >= settings_.duration_s;
}

// The model at the latest instant passed (snapshot_schedule.h), only while iterating:
// before, the model is the initial one (saved at the start); after, the final model stands
// for every later instant.
void PeerDriver::take_due_snapshot() {
  // A joining peer's model is still the initial one, not a model of the run.
  if (phase_ != Phase::kIterating || parts_.protocol.joining()) return;
  const auto instant = snapshots_.due(unix_now_s());
  if (instant && parts_.hooks.on_snapshot) {
    const consensus::Params model = parts_.protocol.debiased_model();  // push-sum: x / w
    parts_.hooks.on_snapshot(*instant, parts_.protocol.iteration(), model->values());
  }
}

void PeerDriver::print_progress(bool force) {
  if (!settings_.progress) return;
  if (!force && now_s() < next_progress_s_) return;
  if (force && printed_iterations_ == report_.iterations()) return;
  printed_iterations_ = report_.iterations();
  next_progress_s_ = now_s() + settings_.progress_interval_s;
  *settings_.progress << format_progress(report_.progress()) << std::endl;
}

// BYE to every neighbour, then keep answering until each has left too (or gone silent past
// peer_timeout_s), so messages still queued reach peers that are behind. A stop request
// cuts it short only if it came after finishing. Then every neighbour is accounted for: one
// that said BYE since its last recorded departure left by "bye", one never recorded "silent".
void PeerDriver::say_goodbye() {
  const auto bye =
      wire::encode_bye(static_cast<wire::PeerId>(settings_.self), parts_.protocol.iteration());
  for (int j : rendezvous_.neighbours()) outbound_.send(j, Outbound::kControl, bye);
  rendezvous_.goodbye(now_s());
  // A peer that leaves to come back ([churn]) does not stay for the others' last models: its
  // neighbours go on without it. It stays until its goodbye has left its queue and a moment
  // more, for the sockets, which drop what they hold when they close.
  constexpr double kLeaveLinger_s = 0.2;
  const double leaving_from_s = now_s();
  const double until_s = now_s() + settings_.peer_timeout_s;
  while (now_s() < until_s && !(report_.finished() && parts_.requests.stop)) {
    if (parts_.requests.leave && !outbound_.pending() &&
        now_s() - leaving_from_s >= kLeaveLinger_s) {
      break;
    }
    if (rendezvous_.all_gone(now_s(), settings_.peer_timeout_s) && !outbound_.pending()) break;
    outbound_.flush();
    receive(std::chrono::milliseconds(outbound_.pending() ? 1 : 100));
  }
  for (const auto& [j, how] : rendezvous_.unrecorded_departures(report_.last_departures())) {
    report_.departed(j, parts_.protocol.iteration(), how);
  }
}

}  // namespace fastk::node::peer
