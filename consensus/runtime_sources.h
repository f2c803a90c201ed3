// What both runtimes give the protocol from outside it, in the same terms: a finished
// gradient (the real runtime's compute thread, the simulator's gradient workers) and the
// delays a run injects (node/stragglers/: a real peer sleeps them, the simulator charges them
// in virtual time). The simulator's engine itself is simulation/; the real runtime includes
// only this.
#pragma once

#include <cstdint>
#include <vector>

#include "consensus/gradient_stats.h"
#include "topology/graph.h"

namespace fastk::consensus {

using topology::PeerId;

class DelaySource {
 public:
  virtual ~DelaySource() = default;
  // Duration of peer's gradient at iteration k (with MachineCosts: its CPU work, the base,
  // and beyond it a sleep).
  virtual double compute_time_s(PeerId peer, std::int64_t k) = 0;
  // Travel time of the tag-k message from `from` to `to` (a message still arrives after the
  // one sent before it on the same link: links keep their order).
  virtual double link_delay_s(PeerId from, PeerId to, std::int64_t k) = 0;
  // How late peer's timer armed for `at_s` fires: none in the simulator, but a real peer's
  // loop waits in whole milliseconds, and a replay of one (node/sim/trace_delays.h) fires
  // each timer when the record's did.
  virtual double timer_latency_s(PeerId /*peer*/, double /*at_s*/) { return 0; }
  // Travel time of `from`'s goodbye to `to`, sent when it finished: none in the simulator (no
  // injected delay holds a BYE back); a replay gives the record's.
  virtual double goodbye_delay_s(PeerId /*from*/, PeerId /*to*/) { return 0; }
  // Whether the tag-k message from `from` reaches `to` at all: always in the simulator; a
  // replay drops one that a newer message superseded in the real sender's queue.
  virtual bool delivered(PeerId /*from*/, PeerId /*to*/, std::int64_t /*k*/) { return true; }
};

struct GradientResult {
  std::vector<float> gradient;
  GradientStats stats;
};

}  // namespace fastk::consensus
