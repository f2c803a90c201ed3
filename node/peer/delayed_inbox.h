// What a peer's neighbours sent, on its way to the protocol, held back by the injected link
// delays of [stragglers] (node/stragglers/delay_spec.h): a message from j with tag k reaches
// the protocol link_delay_s(j, self, k) after it arrived, the meaning `fastk sim` gives it.
// A link keeps its order, as the TCP connection under it does and as the simulator's links
// do: a message is never released before one that came earlier from the same neighbour (so
// with jitter a message may wait past its own delay), and a BYE follows the last held
// message. Without link delays every message passes at once.
//
// Why the receiver holds, not the sender: the delay then starts when the message arrived, so
// it adds to what the real link took, as the simulator adds it to its latency; a model read
// from a neighbour's shared-memory slot is taken when it arrives, before the neighbour can
// rewrite the slot; and the sender's queue keeps its "newest model wins" rule for a slow
// link without having to tell an injected delay from real back-pressure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <vector>

#include "node/peer/inbound.h"
#include "node/stragglers/delay_model.h"

namespace fastk::node::peer {

class DelayedInbox {
 public:
  // `delays` may be null (no injected delays); it must outlive the inbox.
  DelayedInbox(stragglers::DelayModel* delays, int self);

  // The message, if it may reach the protocol now; else it is held.
  std::optional<consensus::Message> admit(consensus::Message message, double now_s);
  // The next held message whose time has come, if any.
  std::optional<consensus::Message> release(double now_s);
  // When the next held message is due (nullopt when none is held).
  std::optional<double> next_release_s() const;

 private:
  struct Held {
    double release_s = 0;
    std::uint64_t sequence = 0;  // equal release times leave in arrival order; key of messages_
    bool operator>(const Held& other) const {
      return release_s != other.release_s ? release_s > other.release_s : sequence > other.sequence;
    }
  };
  stragglers::DelayModel* delays_;
  int self_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;
  std::map<std::uint64_t, consensus::Message> messages_;  // held, by sequence
  std::uint64_t sequence_ = 0;
  std::map<int, double> last_release_s_;  // per neighbour: its last held message's release
};

}  // namespace fastk::node::peer
