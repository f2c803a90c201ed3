// The protocol every peer of a run runs (consensus/peer_protocol.h), built in one place for
// both runtimes, so that what a simulated and a real peer do cannot drift apart.
#pragma once

#include "consensus/peer_protocol.h"
#include "node/config/experiment_config.h"

namespace fastk::node {

// Where the peers run. Real peers can crash or hang; simulated peers cannot.
enum class PeerRuntime { kSimulated, kReal };

// [consensus] as read, with the iteration count of [run] and the local step of
// [optimizer]. Silence: a real peer stops awaiting a neighbour silent for
// [cluster] peer_timeout_ms (the one knob; docs/protocol.md §6.2); a simulated peer never
// falls silent, so the simulator has no timeout (a slow straggler is not a dead peer).
consensus::ProtocolConfig protocol_config(const ConsensusConfig& consensus, const RunConfig& run,
                                          const learning::OptimizerSpec& optimizer,
                                          const ClusterConfig& cluster, PeerRuntime runtime);

}  // namespace fastk::node
