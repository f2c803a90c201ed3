// [security]: whether a run's links are encrypted and authenticated with ZeroMQ CURVE, and
// where its keys are (docs/security.md).
#pragma once

#include <optional>
#include <string>

#include "node/config/cluster.h"

namespace fastk::node {

struct SecurityConfig {
  // "auto": CURVE whenever the peers talk TCP (between hosts, and on one machine with
  // [cluster] local_transport = "tcp": any user of a machine can reach its loopback ports),
  // and whenever keys are given ([security] keys, `fastk node --keys`); "on": required
  // always; "off": plain links (a trusted network, or to measure the cost), with a warning
  // when they are TCP. Local runs over Unix-domain sockets (shm, ipc: the default) leave it
  // off: their socket folder keeps other users out (ipc_directory()), and on the peers
  // benchmark CURVE cost 5-9% of the training phase with models in shared memory
  // (docs/security.md).
  std::string curve = "auto";
  // A key folder made by `fastk keys` (relative to the config file); empty: none.
  std::string keys;
};

// True when some peer of the run is on another machine (a LAN host or endpoint that is not
// loopback): there any host on the network could reach the peers' ports.
bool spans_hosts(const ClusterConfig& cluster, int peer_count);

// True when some peer of the run listens on TCP (loopback included).
bool uses_tcp(const ClusterConfig& cluster, int peer_count);

// Whether the run's links must be CURVE: curve is "on", or "auto" with the peers on TCP.
bool needs_curve(const SecurityConfig& security, const ClusterConfig& cluster, int peer_count);

// Whether `fastk run` makes keys for a launch: [security] names no folder, and the links
// need CURVE.
bool launcher_makes_keys(const SecurityConfig& security, const ClusterConfig& cluster,
                         int peer_count);

// The one line a run prints when curve = "off" leaves TCP links plain; nullopt otherwise.
std::optional<std::string> plain_tcp_warning(const SecurityConfig& security,
                                             const ClusterConfig& cluster, int peer_count);

// The key folder a peer uses: `given` (from the command line) if set, else the config's.
// Throws std::runtime_error saying what to do when the links must be encrypted and no
// folder is known; empty when links stay plain.
std::string key_folder(const SecurityConfig& security, const ClusterConfig& cluster, int peer_count,
                       const std::string& given);

}  // namespace fastk::node
