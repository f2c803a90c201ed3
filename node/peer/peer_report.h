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
struct PeerHooks {
  std::function<void(const consensus::IterationRecord&, double loss)> on_iteration;
  // At evaluation instant `instant` (see PeerOptions), the model then and its iteration.
  std::function<void(std::int64_t instant, std::int64_t iteration, std::span<const float> model)>
      on_snapshot;
};
}  // namespace fastk::node::peer
