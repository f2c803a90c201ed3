// The hooks through which a peer driver's caller writes the run's files while it runs, and
// the report it gets at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "consensus/actions.h"
#include "node/metrics/peer_summary.h"

namespace fastk::node::peer {

// What a peer tells at the end: metrics/peer_summary.h, shared with the simulator.
using Departure = metrics::Departure;
using PeerReport = metrics::PeerReport;

// Hooks for the caller's metrics files; called on the I/O thread. Record times are seconds
// since the peer's first iteration began.
// When a peer's first iteration began. A peer that comes back counts its times from its first
// process's (node_command.cc keeps it in the peer folder), so its files and summary read as
// one run.
struct IterationStart {
  double unix_s = 0;
  double monotonic_s = 0;  // steady_clock seconds: one clock for every process of the machine
};

struct PeerHooks {
  std::function<void(const consensus::IterationRecord&, double loss)> on_iteration;
  // At evaluation instant `instant` (see PeerOptions), the model then and its iteration.
  std::function<void(std::int64_t instant, std::int64_t iteration, std::span<const float> model)>
      on_snapshot;
  // The first iteration begins (not called for a peer that continues an earlier start).
  std::function<void(const IterationStart&)> on_began;
  // A neighbour's message (a goodbye too) went into the protocol at `at_s` (the records'
  // clock; negative: during the start-up): what `fastk sim --replay` re-enacts its link by
  // (docs/simulation.md §8).
  // `bye`: the message was the neighbour's goodbye.
  std::function<void(std::int64_t iteration, int from, std::int64_t tag, double at_s, bool bye)>
      on_arrival;
  // A timer the protocol armed fired (the loop wakes up in whole milliseconds), at `at_s`.
  std::function<void(std::int64_t iteration, double at_s)> on_timer;
  // A checkpoint is about to be saved: what the files hold must reach the disk first, so a
  // peer resumed from it finds every row before its iteration.
  std::function<void()> on_checkpoint;
};
}  // namespace fastk::node::peer
