#include "node/peer/delayed_inbox.h"

#include <algorithm>

namespace fastk::node::peer {

DelayedInbox::DelayedInbox(stragglers::DelayModel* delays, int self)
    : delays_(delays && delays->delays_links() ? delays : nullptr), self_(self) {}

std::optional<consensus::Message> DelayedInbox::admit(consensus::Message message, double now_s) {
  if (!delays_) return message;
  const int from = consensus::sender(message);
  double& last = last_release_s_[from];
  // A link keeps its order: nothing is released before what came earlier from the same
  // neighbour, and a BYE follows the last held message whatever its own delay would be.
  const bool bye = std::holds_alternative<consensus::NeighbourLeft>(message);
  const double delay_s = bye ? 0.0 : delays_->link_delay_s(from, self_, consensus::tag_of(message));
  const double release_s = std::max(now_s + delay_s, last);
  last = release_s;
  messages_.emplace(sequence_, std::move(message));
  held_.push({release_s, sequence_++});
  return std::nullopt;
}

// GCC 12 at -O3 warns that moving the variant may read a shared_ptr of an alternative it
// does not hold (a known false positive of -Wmaybe-uninitialized inside std::variant); the
// warning is silenced for this function only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
std::optional<consensus::Message> DelayedInbox::release(double now_s) {
  if (held_.empty() || held_.top().release_s > now_s) return std::nullopt;
  const auto it = messages_.find(held_.top().sequence);
  held_.pop();
  std::optional<consensus::Message> message(std::in_place, std::move(it->second));
  messages_.erase(it);
  return message;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

std::optional<double> DelayedInbox::next_release_s() const {
  if (held_.empty()) return std::nullopt;
  return held_.top().release_s;
}

}  // namespace fastk::node::peer
