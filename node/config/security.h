// [security]: whether a run's links are encrypted and authenticated with ZeroMQ CURVE, and
// where its keys are (docs/security.md).
#pragma once

#include <string>

#include "node/config/cluster.h"

namespace fastk::node {

struct SecurityConfig {
  // "auto": CURVE whenever keys are known ([security] keys, `fastk node --keys`, or the
  // keys `fastk run` makes for runs that span hosts), and required when the run spans
  // hosts; "on": required always; "off": plain links (a trusted network, or to measure the
  // cost). Local runs leave it off: on the peers benchmark it cost 5-9% of the training
  // phase with models in shared memory (whose socket folder keeps other users out anyway:
  // ipc_directory()) and 140% with models on the socket (docs/security.md).
  std::string curve = "auto";
  // A key folder made by `fastk keys` (relative to the config file); empty: none.
  std::string keys;
};

// True when some peer of the run is on another machine (a LAN host or endpoint that is not
// loopback): there any host on the network could reach the peers' ports.
bool spans_hosts(const ClusterConfig& cluster, int peer_count);

// Whether `fastk run` makes keys for a launch: [security] names no folder, and curve is "on",
// or "auto" with the run spanning hosts.
bool launcher_makes_keys(const SecurityConfig& security, const ClusterConfig& cluster,
                         int peer_count);

// The key folder a peer uses: `given` (from the command line) if set, else the config's.
// Throws std::runtime_error saying what to do when the links must be encrypted and no
// folder is known; empty when links stay plain.
std::string key_folder(const SecurityConfig& security, const ClusterConfig& cluster, int peer_count,
                       const std::string& given);

}  // namespace fastk::node
