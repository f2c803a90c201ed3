#include "node/config/protocol_config.h"

namespace fastk::node {

consensus::ProtocolConfig protocol_config(const ConsensusConfig& consensus, const RunConfig& run,
                                          const learning::OptimizerSpec& optimizer,
                                          const ClusterConfig& cluster, PeerRuntime runtime) {
  consensus::ProtocolConfig protocol = consensus.protocol;
  protocol.iterations = run.iterations;
  protocol.optimizer = optimizer;
  protocol.seed = run.seed;
  protocol.silence_timeout_s =
      runtime == PeerRuntime::kReal ? static_cast<double>(cluster.peer_timeout_ms) / 1000.0 : 0.0;
  return protocol;
}

}  // namespace fastk::node
