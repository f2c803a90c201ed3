// The times of a recorded real run as the simulator's DelaySource (consensus/
// runtime_sources.h), for `fastk sim --replay` (docs/simulation.md §8). A gradient of peer i
// at iteration k takes what it took in the record, from the input that began k to the moment
// the protocol took the gradient (so the update's own work and any wait for the I/O thread
// are in it); a message of tag k from j to i takes from the moment j began k in the record to
// the moment i's protocol took it (so the link, the injected delay and i's queue are in it).
// The replay then runs without machine costs: what the record measured is all it charges.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "consensus/runtime_sources.h"
#include "node/sim/recorded_run.h"

namespace fastk::node::sim {

class TraceDelays final : public consensus::DelaySource {
 public:
  // `as_recorded`: the replay runs the recorded policy, and the messages a newer one superseded
  // in the record are dropped as they were. Another policy waits differently, so a message it
  // needs may be one the record's senders superseded: it is delivered, with the newer one.
  TraceDelays(const RecordedRun& run, bool as_recorded);
  // Throws std::out_of_range naming the peer and iteration beyond the record.
  double compute_time_s(consensus::PeerId peer, std::int64_t k) override;
  // A message the record has no arrival for (and that no newer one superseded) took its
  // link's median time, and arrives after the receiver's last recorded update; it is counted.
  double link_delay_s(consensus::PeerId from, consensus::PeerId to, std::int64_t k) override;
  // A message a newer one superseded in its sender's queue (the record took the newer one and
  // never this one) is not delivered; counted.
  bool delivered(consensus::PeerId from, consensus::PeerId to, std::int64_t k) override;
  // A timer fires when the record's first fired at or after `at_s` (within 20 ms; else on
  // time): a real peer's loop wakes up in whole milliseconds.
  double timer_latency_s(consensus::PeerId peer, double at_s) override;
  // A goodbye takes from the sender's last update to when the record's receiver took it (none
  // recorded: it arrives at once).
  double goodbye_delay_s(consensus::PeerId from, consensus::PeerId to) override;
  std::int64_t without_arrival() const { return without_arrival_; }
  std::int64_t superseded() const { return superseded_; }

 private:
  const RecordedRun& run_;
  bool as_recorded_;
  std::map<std::pair<int, int>, double> link_median_s_;  // (to, from)
  double median_s_ = 0;                                  // over every link
  std::int64_t without_arrival_ = 0;
  std::int64_t superseded_ = 0;
};

}  // namespace fastk::node::sim
