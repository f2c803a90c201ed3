// [cluster]: where each peer listens. Either hosts with a base port (peers are placed on the
// hosts in contiguous blocks, as mpirun's default by-slot mapping does, so ring neighbours
// mostly share a host), or one explicit endpoint per peer. Documented in
// experiments/configs/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "node/config/config_error.h"

namespace fastk::node {

struct ClusterConfig {
  std::vector<std::string> hosts;           // empty (and no endpoints): every peer on 127.0.0.1
  int base_port = 47000;                    // peer with local index j on its host: base_port + j
  std::vector<std::string> endpoints;       // "tcp://host:port", one per peer, instead of hosts
  std::int64_t peer_timeout_ms = 10000;     // a neighbour silent this long is gone
  std::int64_t startup_timeout_ms = 30000;  // give up when a neighbour never says hello
  // When every peer is on this machine (all hosts loopback): "shm" (Unix-domain sockets, see
  // ipc_directory(), with models passed through shared memory, see kSharedModelsPrefix),
  // "ipc" (models over the Unix-domain sockets too) or "tcp" (loopback TCP). Ignored for
  // LAN hosts and endpoints.
  std::string local_transport = "shm";
  // Each peer binds itself (and the threads it starts) to its share of the CPUs it may use:
  // the peers of one host split them in blocks, in peer order (see cpu_binding.h).
  bool bind_cpus = true;
};

// Where local peers' Unix-domain sockets live: ipc://$TMPDIR/fastk-<uid>/<host>-<port>.sock,
// named after the TCP endpoint they replace, so that ports keep runs apart as they do over
// TCP, in a folder of the user's own (mode 0700, made by the peers: os/private_folder.h), so
// that no other user can connect whatever the umask (docs/security.md). $TMPDIR counts when
// it is an absolute path other than "/" of at most kLongestSocketTmpdir bytes (so that the
// longest socket path fits a Unix socket's 107), as the test suite's folder in the build tree
// does; otherwise /tmp. Every peer of a machine
// must see the same TMPDIR (children of one launcher do).
std::string ipc_directory();
std::string ipc_directory_under(const char* tmpdir, unsigned uid);
inline constexpr std::size_t kLongestSocketTmpdir = 60;
// local_transport = "shm": each peer's model slots are the POSIX shared-memory object
// /fastk-<host>-<port>.models (a file in /dev/shm), named like its socket.
inline constexpr const char* kSharedModelsPrefix = "/fastk-";

struct PeerEndpoints {
  std::string bind;     // what the peer binds: its own address if loopback, else tcp://*:port
  std::string connect;  // what its neighbours connect to: tcp://host:port (or the ipc path)
  // local_transport = "shm": the shared-memory object holding the peer's models (for
  // shm_open); empty when models travel over the socket.
  std::string shared_models;
};

// Records (with TOML paths under "cluster.") every way `cluster` does not fit `peer_count`
// peers: endpoint count, ports past 65535, two peers on one endpoint, loopback addresses
// mixed with LAN hosts.
void check_cluster_fits(const ClusterConfig& cluster, int peer_count, ConfigErrors& errors);

// The endpoints of `peer` (0-based). Throws ConfigError when the cluster does not fit
// `peer_count` peers (see check_cluster_fits) or `peer` is out of range.
PeerEndpoints peer_endpoints(const ClusterConfig& cluster, int peer_count, int peer);

// Which of the peers on its host `peer` is: its index among them in peer order, and how
// many there are (peers sharing a host name or address, "localhost" being 127.0.0.1; every
// peer of a local run). {0, 1} for a peer out of range.
struct HostShare {
  int local_index = 0;
  int local_count = 1;
};
HostShare host_share(const ClusterConfig& cluster, int peer_count, int peer);

// "tcp://host:port" with a host name or IPv4 address and a port in 1..65535.
struct TcpEndpoint {
  std::string host;
  int port = 0;
};
// Empty when `text` is not of that form.
std::optional<TcpEndpoint> parse_tcp_endpoint(const std::string& text);
bool valid_host(const std::string& host);
// "localhost" or 127.x.y.z: a host that is this machine, reached without ssh.
bool is_loopback(const std::string& host);

}  // namespace fastk::node
