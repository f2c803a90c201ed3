// Links of a limited rate for the simulator: each peer's link to the network carries
// `bytes_per_s` out and as much in, as a LAN whose hosts' links are shaped (scripts/lan.sh
// --rate, a token bucket in each direction). A message occupies its sender's uplink for
// bytes / rate, in the order the sender sent its messages, and the receiver's downlink for as
// long, in the first free stretch after the sender began sending it: the two are pipelined,
// as a switch forwards packets, not whole messages, and a message from a backlogged sender
// does not hold up one that another sender got through earlier. The link's own delay
// (latency, injected delay) comes after the bytes are in, where real peers add it
// (node/peer/delayed_inbox.h). Without a rate (0) links are free and only the delay passes.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace fastk::simulation {

// What a message costs on a link beyond its payload: the wire's header and framing
// (node/WIRE.md), rounded up. Only a rate makes it matter.
inline constexpr std::int64_t kMessageOverheadBytes = 64;

class ShapedLinks {
 public:
  // Throws std::invalid_argument for a negative or non-finite rate.
  ShapedLinks(int peers, double bytes_per_s);

  bool limited() const { return bytes_per_s_ > 0; }
  // When a message of `bytes`, handed to the network at `send_s`, is in at `to` and its link
  // delay `delay_s` has passed. Books the time on both links. Calls come in the order of
  // `send_s` (the simulator's event order).
  double arrival_s(int from, int to, double send_s, std::int64_t bytes, double delay_s);

 private:
  // The start of the first stretch of `length` at or after `earliest` that `busy` leaves free.
  static double first_gap(const std::map<double, double>& busy, double earliest, double length);

  double bytes_per_s_;
  std::vector<double> uplink_free_s_;  // per sender: when its link is done with what it sent
  // Per receiver: the stretches its link is booked, start -> end, disjoint.
  std::vector<std::map<double, double>> downlink_busy_;
};

}  // namespace fastk::simulation
