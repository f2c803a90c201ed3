#include "node/peer/delayed_inbox.h"

#include <algorithm>

namespace fastk::node::peer {

DelayedInbox::DelayedInbox(stragglers::DelayModel* delays, int self)
    : delays_(delays && delays->delays_links() ? delays : nullptr), self_(self) {}

std::optional<Inbound> DelayedInbox::admit(Inbound message, double now_s) {
  if (!delays_) return message;
  double& last = last_release_s_[message.from];
  const double release_s = message.bye
                               ? std::max(now_s, last)
                               : now_s + delays_->link_delay_s(message.from, self_, message.tag);
  last = std::max(last, release_s);
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
