// Links of a limited rate for the simulator: each peer's link to the network carries
// `bytes_per_s` out and as much in, as a LAN whose hosts' links are shaped (scripts/lan.sh
// --rate, a token bucket in each direction). A message occupies its sender's uplink for
// bytes / rate, queued behind the sender's earlier messages, and then the receiver's downlink
// for as long, queued behind what that peer receives from others. The two are pipelined, as a
// switch forwards packets, not whole messages: a message is in when its last byte has crossed
// both links. Without a rate (0) links are free and only the delay model's times pass.
#pragma once

#include <cstdint>
#include <vector>

namespace fastk::consensus {

// What a message costs on a link beyond its payload: the wire's header and framing
// (node/WIRE.md), rounded up. Only a rate makes it matter.
inline constexpr std::int64_t kMessageOverheadBytes = 64;

class ShapedLinks {
 public:
  // Throws std::invalid_argument for a negative or non-finite rate.
  ShapedLinks(int peers, double bytes_per_s);

  bool limited() const { return bytes_per_s_ > 0; }
  // When a message of `bytes`, handed to the network at `send_s`, is in at `to`, given the
  // delay the link adds on top of its transmission (latency, injected delay). Books the
  // time on both links.
  double arrival_s(int from, int to, double send_s, std::int64_t bytes, double delay_s);

 private:
  double bytes_per_s_;
  std::vector<double> uplink_free_s_;    // per sender: when its link is done with what it sent
  std::vector<double> downlink_free_s_;  // per receiver: when its link is done with what came
};

}  // namespace fastk::consensus
