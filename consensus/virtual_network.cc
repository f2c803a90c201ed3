#include "consensus/virtual_network.h"

#include <stdexcept>
#include <string>

namespace fastk::consensus {

VirtualNetwork::VirtualNetwork(std::vector<std::unique_ptr<PeerProtocol>> peers,
                               DelaySource& delays, GradientSource& gradients)
    : peers_(std::move(peers)),
      removed_(peers_.size(), false),
      delays_(delays),
      gradients_(gradients) {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (!peers_[i] || peers_[i]->id() != static_cast<PeerId>(i)) {
      throw std::invalid_argument("VirtualNetwork: peer " + std::to_string(i) +
                                  " missing or out of order");
    }
  }
}

void VirtualNetwork::schedule(Event event) {
  event.sequence = sequence_++;
  queue_.push(std::move(event));
}

void VirtualNetwork::start(double now_s) {
  now_s_ = now_s;
  for (auto& peer : peers_) {
    scratch_.clear();
    peer->start(now_s, scratch_);
    execute(peer->id(), scratch_);
  }
}

void VirtualNetwork::execute(PeerId peer, Actions& actions) {
  // Executing may not re-enter a protocol, so `actions` stays valid throughout.
  for (auto& action : actions) {
    if (auto* params = std::get_if<SendParams>(&action)) {
      for (PeerId to : params->to) send(peer, to, params->tag, params->params, nullptr);
    } else if (auto* coded = std::get_if<SendCoded>(&action)) {
      send(peer, coded->to, coded->tag, nullptr, coded->coded);
    } else if (auto* grad = std::get_if<StartGradient>(&action)) {
      gradients_.begin(peer, *grad);
      Event e;
      // Coded peers without split batches do `work` gradients' worth of compute.
      e.at_s = now_s_ + grad->work * delays_.compute_time_s(peer, grad->iteration);
      e.kind = Kind::kGradientDone;
      e.peer = peer;
      e.tag = grad->iteration;
      schedule(std::move(e));
    } else if (auto* timer = std::get_if<ArmTimer>(&action)) {
      Event e;
      e.at_s = std::max(now_s_, timer->at_s);
      e.kind = Kind::kTimer;
      e.peer = peer;
      schedule(std::move(e));
    } else if (auto* done = std::get_if<IterationCompleted>(&action)) {
      if (on_record) on_record(done->record);
    } else if (std::holds_alternative<Finished>(action)) {
      ++finished_;
    }
  }
}

void VirtualNetwork::send(PeerId from, PeerId to, std::int64_t tag, const Params& params,
                          CodedPart coded) {
  Event e;
  e.at_s = now_s_ + delays_.link_delay_s(from, to, tag);
  e.kind = Kind::kMessage;
  e.peer = to;
  e.from = from;
  e.tag = tag;
  e.params = params;
  e.coded = std::move(coded);
  schedule(std::move(e));
  ++messages_;
}

void VirtualNetwork::dispatch(const Event& event) {
  if (removed_[static_cast<std::size_t>(event.peer)]) return;
  PeerProtocol& peer = *peers_[static_cast<std::size_t>(event.peer)];
  if (peer.finished()) return;
  Actions actions;
  switch (event.kind) {
    case Kind::kMessage:
      if (event.coded) {
        peer.on_coded_gradient(now_s_, event.from, event.tag, event.coded, actions);
      } else {
        peer.on_message(now_s_, event.from, event.tag, event.params, actions);
      }
      break;
    case Kind::kGradientDone: {
      GradientResult result = gradients_.collect(event.peer, event.tag);
      peer.on_gradient_done(now_s_, result.gradient, result.stats, actions);
      break;
    }
    case Kind::kTimer:
      peer.on_timer(now_s_, actions);
      break;
  }
  execute(event.peer, actions);
}

bool VirtualNetwork::run_until(double until_s) {
  while (!queue_.empty() && queue_.top().at_s <= until_s) {
    Event event = queue_.top();
    queue_.pop();
    now_s_ = event.at_s;
    ++events_;
    dispatch(event);
  }
  if (until_s > now_s_) now_s_ = until_s;
  return !queue_.empty();
}

void VirtualNetwork::run() {
  while (!queue_.empty() && !all_finished()) {
    Event event = queue_.top();
    queue_.pop();
    now_s_ = event.at_s;
    ++events_;
    dispatch(event);
  }
}

void VirtualNetwork::remove_peer(PeerId peer, double now_s) {
  if (removed_[static_cast<std::size_t>(peer)]) return;
  removed_[static_cast<std::size_t>(peer)] = true;
  now_s_ = std::max(now_s_, now_s);
  for (PeerId j : peers_[static_cast<std::size_t>(peer)]->known_neighbours()) {
    if (removed_[static_cast<std::size_t>(j)] || peers_[static_cast<std::size_t>(j)]->finished()) {
      continue;
    }
    Actions actions;
    peers_[static_cast<std::size_t>(j)]->on_neighbour_left(now_s_, peer, actions);
    execute(j, actions);
  }
}

}  // namespace fastk::consensus
