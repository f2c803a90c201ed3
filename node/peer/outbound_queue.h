// A peer's sends, kept when a neighbour's queue refuses them and retried every loop turn.
// Newest wins: a newer model or coded gradient replaces the oldest of its kind still pending
// for that neighbour once `models_kept` of them are (one by default, as in the receiver's
// one-slot mailbox; policy full keeps staleness + 2, at most 8, so that tag k is delivered;
// push-sum keeps every one: PeerProtocol::models_kept_queued), so the newest ones and a BYE are
// never lost and a peer running ahead of a stuck neighbour keeps a bounded number queued. Dropping
// refused sends silently can leave a neighbour waiting for a tag that never comes, until the
// silence timeout. Compressed differences are never replaced (a gap parts the estimates), but
// once kMaxQueuedDifferenceBytes of them wait for one neighbour (a dead one, or one thousands of
// iterations behind) the backlog is discarded, said once per neighbour: memory must stay bounded.
// Later differences go out as before, so a neighbour still there sees the gap and parts this
// peer explicitly (PeerProtocol, NeighbourGone::lost_difference) instead of mixing a stale copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>

#include "node/transport/link.h"

namespace fastk::node::peer {

// What an outbound message is, for newest-wins: the caller says, no header byte is peeked.
enum class Outbound {
  kControl,               // HELLO, HELLO_ACK, BYE: every one is sent
  kModel,                 // MODEL or SHARED_MODEL: a newer one replaces a pending one
  kCodedGradient,         // CODED_GRADIENT: likewise
  kAveraging,             // AVERAGE_REQUEST, AVERAGE_REPLY: every one is sent (each moves a half)
  kCompressedDifference,  // COMPRESSED_DIFFERENCE: every one is sent (each moves an estimate)
};

class OutboundQueue {
 public:
  // `models_kept`: models held per neighbour before a newer one replaces the oldest; 0: all
  // (PeerProtocol::models_kept_queued; push-sum, docs/protocol.md §4.4). Coded gradients
  // keep the newest only.
  explicit OutboundQueue(transport::Link& link, std::size_t models_kept = 1)
      : link_(link), models_kept_(models_kept) {}

  // Sends at once unless older sends to `to` are pending or the link refuses; then queues.
  void send(int to, Outbound what, const wire::EncodedMessage& message);
  // Retries the pending sends, oldest first, until the link refuses one.
  void flush();
  bool pending() const;
  std::uint64_t superseded() const { return superseded_; }  // replaced, never sent
  // Compressed differences discarded from a backlog (see above).
  std::uint64_t dropped_differences() const { return dropped_differences_; }
  static constexpr std::size_t kMaxQueuedDifferenceBytes = std::size_t{256} << 20;

 private:
  struct Item {
    Outbound what;
    wire::EncodedMessage message;
  };
  transport::Link& link_;
  std::map<int, std::deque<Item>> pending_;  // per neighbour, oldest first
  // Discards the differences queued for `to` once they reach kMaxQueuedDifferenceBytes.
  void drop_backlog(int to, std::deque<Item>& queue);

  std::uint64_t superseded_ = 0;
  std::uint64_t dropped_differences_ = 0;
  std::set<int> backlog_dropped_;  // neighbours told about on the log already
  std::size_t models_kept_ = 1;
};

}  // namespace fastk::node::peer
