#include "node/peer/rendezvous.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace fastk::node::peer {

Rendezvous::Rendezvous(int self, std::vector<int> neighbours, wire::HelloInfo run,
                       const std::vector<int>& quiet)
    : self_(self), neighbours_(std::move(neighbours)), run_(run) {
  for (int j : neighbours_) state_[j];
  for (int j : quiet) state_.at(j).quiet = true;
}

std::optional<wire::EncodedMessage> Rendezvous::heard(int from, wire::MessageType type,
                                                      double now_s, std::int64_t iteration) {
  const auto it = state_.find(from);
  if (it == state_.end()) return std::nullopt;  // the decoder lets only neighbours through
  Neighbour& n = it->second;
  if (!n.heard) ++heard_count_;
  n.heard = true;
  n.last_heard_s = now_s;
  if (type == wire::MessageType::kBye) n.said_bye = true;
  if (type == wire::MessageType::kHello) return hello(wire::MessageType::kHelloAck, iteration);
  return std::nullopt;
}

bool Rendezvous::came_back(int from, wire::MessageType type) {
  const auto it = state_.find(from);
  if (it == state_.end()) return false;
  Neighbour& n = it->second;
  if (type == wire::MessageType::kHello) return std::exchange(n.sent_models, false);
  if (type != wire::MessageType::kHelloAck && type != wire::MessageType::kBye) {
    n.sent_models = true;
  }
  return false;
}

std::vector<int> Rendezvous::hellos_due(double now_s) {
  if (now_s < next_hello_s_) return {};
  next_hello_s_ = now_s + kHelloEvery_s;
  std::vector<int> due;
  for (int j : neighbours_)
    if (!state_.at(j).heard) due.push_back(j);
  return due;
}

wire::EncodedMessage Rendezvous::hello(wire::MessageType type, std::int64_t iteration) const {
  return wire::encode_hello(type, static_cast<wire::PeerId>(self_), iteration, run_);
}

std::string Rendezvous::missing(double timeout_s,
                                const std::function<std::string(int)>& where) const {
  std::string list;
  for (int j : neighbours_) {
    if (!state_.at(j).heard) list += "\n  peer " + std::to_string(j) + " at " + where(j);
  }
  return "peer " + std::to_string(self_) + " did not hear from " +
         std::to_string(neighbours_.size() - heard_count_) + " neighbour(s) within " +
         "startup_timeout_ms = " + std::to_string(std::llround(timeout_s * 1000)) +
         " (are they running, with the same config?):" + list;
}

void Rendezvous::started(double now_s) {
  for (auto& [j, n] : state_) n.last_heard_s = std::max(n.last_heard_s, now_s);
}

bool Rendezvous::all_gone(double now_s, double timeout_s) const {
  for (const auto& [j, n] : state_) {
    const double silent_since_s = n.quiet ? std::max(n.last_heard_s, goodbye_s_) : n.last_heard_s;
    if (!n.said_bye && now_s - silent_since_s < timeout_s) return false;
  }
  return true;
}

bool Rendezvous::said_bye(int neighbour) const {
  const auto it = state_.find(neighbour);
  return it != state_.end() && it->second.said_bye;
}

std::vector<std::pair<int, std::string>> Rendezvous::unrecorded_departures(
    const std::map<int, std::string>& recorded) const {
  std::vector<std::pair<int, std::string>> out;
  for (int j : neighbours_) {
    const auto last = recorded.find(j);
    const bool known = last != recorded.end();
    if (said_bye(j) && (!known || last->second != "bye")) {
      out.emplace_back(j, "bye");
    } else if (!said_bye(j) && !known) {
      out.emplace_back(j, "silent");
    }
  }
  return out;
}

}  // namespace fastk::node::peer
