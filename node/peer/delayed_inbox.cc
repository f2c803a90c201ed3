#include "node/peer/delayed_inbox.h"

#include <algorithm>

namespace fastk::node::peer {

DelayedInbox::DelayedInbox(stragglers::DelayModel* delays, int self)
    : delays_(delays && delays->delays_links() ? delays : nullptr), self_(self) {}

std::optional<Inbound> DelayedInbox::admit(Inbound message, double now_s) {
  if (!delays_) return message;
  double& last = last_release_s_[message.from];
  // A link keeps its order: nothing is released before what came earlier from the same
  // neighbour, and a BYE follows the last held message whatever its own delay would be.
  const double delay_s =
      message.bye ? 0.0 : delays_->link_delay_s(message.from, self_, message.tag);
  const double release_s = std::max(now_s + delay_s, last);
  last = release_s;
  held_.push({release_s, sequence_++, std::move(message)});
  return std::nullopt;
}

std::optional<Inbound> DelayedInbox::release(double now_s) {
  if (held_.empty() || held_.top().release_s > now_s) return std::nullopt;
  Inbound message = held_.top().message;
  held_.pop();
  return message;
}

std::optional<double> DelayedInbox::next_release_s() const {
  if (held_.empty()) return std::nullopt;
  return held_.top().release_s;
}

}  // namespace fastk::node::peer
