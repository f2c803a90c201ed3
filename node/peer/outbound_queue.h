// A peer's sends, kept when a neighbour's queue refuses them and retried every loop turn.
// Newest wins: a newer model or coded gradient replaces an older one of its kind still
// pending for that neighbour (as it would in the receiver's one-slot mailbox), so the newest
// ones and a BYE are never lost, and a peer running ahead of a stuck neighbour keeps at most
// one of each queued. Dropping refused sends silently can leave a neighbour waiting for a tag
// that never comes, until the silence timeout.
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include "node/transport/link.h"

namespace fastk::node::peer {

// What an outbound message is, for newest-wins: the caller says, no header byte is peeked.
enum class Outbound {
  kControl,        // HELLO, HELLO_ACK, BYE: every one is sent
  kModel,          // MODEL or SHARED_MODEL: a newer one replaces a pending one
  kCodedGradient,  // CODED_GRADIENT: likewise
};

class OutboundQueue {
 public:
  // `keep_every_model`: no model replaces another (PeerProtocol::needs_every_model: push-sum,
  // where each one is mass that must arrive once, docs/protocol.md §4.4; and policy full,
  // where the receiver mixes exactly the iteration-k model).
  explicit OutboundQueue(transport::Link& link, bool keep_every_model = false)
      : link_(link), keep_every_model_(keep_every_model) {}

  // Sends at once unless older sends to `to` are pending or the link refuses; then queues.
  void send(int to, Outbound what, const wire::EncodedMessage& message);
  // Retries the pending sends, oldest first, until the link refuses one.
  void flush();
  bool pending() const;
  std::uint64_t superseded() const { return superseded_; }  // replaced, never sent

 private:
  struct Item {
    Outbound what;
    wire::EncodedMessage message;
  };
  transport::Link& link_;
  std::map<int, std::deque<Item>> pending_;  // per neighbour, oldest first
  std::uint64_t superseded_ = 0;
  bool keep_every_model_ = false;
};

}  // namespace fastk::node::peer
