#include "node/config/cluster.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

namespace fastk::node {
namespace {

constexpr int kMaxPort = 65535;
const std::string kDefaultHost = "127.0.0.1";

// Where peer `peer` lives when peers are placed in blocks over `host_count` hosts: block
// sizes differ by at most one, the first (peers % hosts) hosts take the larger blocks.
struct Placement {
  int host = 0;
  int local_index = 0;
};
Placement place(int peer, int peer_count, int host_count) {
  const int small = peer_count / host_count;
  const int large_hosts = peer_count % host_count;
  const int in_large_blocks = large_hosts * (small + 1);
  if (peer < in_large_blocks) return {peer / (small + 1), peer % (small + 1)};
  return {large_hosts + (peer - in_large_blocks) / small, (peer - in_large_blocks) % small};
}

int largest_block(int peer_count, int host_count) {
  return (peer_count + host_count - 1) / host_count;
}

const std::vector<std::string>& hosts_or_default(const ClusterConfig& cluster) {
  static const std::vector<std::string> kLoopbackOnly = {kDefaultHost};
  return cluster.hosts.empty() ? kLoopbackOnly : cluster.hosts;
}

PeerEndpoints endpoints_of(const std::string& host, int port, bool ipc, bool shared_models) {
  const std::string port_text = ":" + std::to_string(port);
  // A peer binds its own loopback address (never exposing a local run to the LAN); on a LAN
  // host it binds every interface, since a host name cannot be bound by ZeroMQ.
  std::string bind_host = host == "localhost" ? kDefaultHost : is_loopback(host) ? host : "*";
  if (ipc) {
    // A Unix-domain socket moves a model with less kernel work than loopback TCP (no
    // segmentation, acknowledgements or softirq processing).
    const std::string name = bind_host + "-" + std::to_string(port);
    const std::string path = "ipc://" + ipc_directory() + "/" + name + ".sock";
    return {path, path, shared_models ? kSharedModelsPrefix + name + ".models" : ""};
  }
  return {"tcp://" + bind_host + port_text, "tcp://" + host + port_text, ""};
}

// Unix-domain sockets only when every peer is on this machine.
bool uses_ipc(const ClusterConfig& cluster) {
  if (cluster.local_transport == "tcp" || !cluster.endpoints.empty()) return false;
  const auto& hosts = hosts_or_default(cluster);
  return std::all_of(hosts.begin(), hosts.end(), is_loopback);
}

}  // namespace

std::string ipc_directory_under(const char* tmpdir, unsigned uid) {
  std::string base = tmpdir ? tmpdir : "";
  while (base.size() > 1 && base.ends_with('/')) base.pop_back();
  // The longest socket path then is base + "/fastk-<10 digits>/<15>-<7>.sock": 106 bytes, of
  // the 107 a Unix socket path may have (a port past 65535 names a socket when a million
  // peers share this machine: check_cluster_fits allows it over Unix sockets).
  // "/" itself: a folder in the root only root may create.
  if (base.size() < 2 || base[0] != '/' || base.size() > kLongestSocketTmpdir) base = "/tmp";
  return base + "/fastk-" + std::to_string(uid);
}

std::string ipc_directory() { return ipc_directory_under(std::getenv("TMPDIR"), ::geteuid()); }

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.starts_with("127.");
}

bool valid_host(const std::string& host) {
  if (host.empty() || host.size() > 253 || host.front() == '-' || host.front() == '.') {
    return false;
  }
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-';
  });
}

std::optional<TcpEndpoint> parse_tcp_endpoint(const std::string& text) {
  const std::string scheme = "tcp://";
  const std::size_t colon = text.rfind(':');
  if (!text.starts_with(scheme) || colon == std::string::npos || colon < scheme.size()) {
    return std::nullopt;
  }
  TcpEndpoint endpoint{text.substr(scheme.size(), colon - scheme.size()), 0};
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(first, last, endpoint.port);
  if (first == last || error != std::errc{} || end != last || endpoint.port < 1 ||
      endpoint.port > kMaxPort || !valid_host(endpoint.host)) {
    return std::nullopt;
  }
  return endpoint;
}

namespace {

// A peer on another host would reach a loopback address as itself, never as this machine.
void check_no_loopback_among_lan_hosts(const std::vector<std::string>& hosts,
                                       const std::string& key, ConfigErrors& errors) {
  const auto loopback = std::find_if(hosts.begin(), hosts.end(), is_loopback);
  const auto lan = std::find_if_not(hosts.begin(), hosts.end(), is_loopback);
  if (loopback == hosts.end() || lan == hosts.end()) return;
  errors.add(key, "mixes the loopback address " + *loopback + " with the LAN host " + *lan +
                      ": peers on " + *lan + " would reach " + *loopback +
                      " as themselves; give this machine's LAN address instead");
}

}  // namespace

void check_cluster_fits(const ClusterConfig& cluster, int peer_count, ConfigErrors& errors) {
  if (!cluster.endpoints.empty()) {
    if (static_cast<int>(cluster.endpoints.size()) != peer_count) {
      errors.add("cluster.endpoints", std::to_string(cluster.endpoints.size()) + " endpoints for " +
                                          std::to_string(peer_count) +
                                          " peers: give exactly one per peer");
    }
    std::vector<std::string> hosts;
    for (const auto& e : cluster.endpoints) {
      if (const auto parsed = parse_tcp_endpoint(e)) hosts.push_back(parsed->host);
    }
    check_no_loopback_among_lan_hosts(hosts, "cluster.endpoints", errors);
    return;
  }
  check_no_loopback_among_lan_hosts(cluster.hosts, "cluster.hosts", errors);
  const int last_port =
      cluster.base_port +
      largest_block(peer_count, static_cast<int>(hosts_or_default(cluster).size())) - 1;
  // Peers on this machine talk over Unix sockets named after the port (endpoints_of): a
  // simulation of 20,000 peers, or a local run, is not bound by TCP's port range.
  if (last_port > kMaxPort && !uses_ipc(cluster)) {
    errors.add("cluster.base_port", "base_port " + std::to_string(cluster.base_port) + " + " +
                                        std::to_string(last_port - cluster.base_port + 1) +
                                        " peers per host runs past port 65535");
  }
}

HostShare host_share(const ClusterConfig& cluster, int peer_count, int peer) {
  if (peer_count <= 0 || peer < 0 || peer >= peer_count) return {0, 1};
  if (!cluster.endpoints.empty()) {
    // One machine under two spellings is one host.
    const auto host_of = [&](int i) {
      const auto e = parse_tcp_endpoint(cluster.endpoints[static_cast<std::size_t>(i)]);
      if (!e) return std::string();
      return e->host == "localhost" ? kDefaultHost : e->host;
    };
    const std::string mine = host_of(peer);
    HostShare share{0, 0};
    for (int i = 0; i < peer_count; ++i) {
      if (host_of(i) != mine) continue;
      if (i < peer) ++share.local_index;
      ++share.local_count;
    }
    return share;
  }
  const int hosts = static_cast<int>(hosts_or_default(cluster).size());
  const Placement p = place(peer, peer_count, hosts);
  const int small = peer_count / hosts;
  return {p.local_index, p.host < peer_count % hosts ? small + 1 : small};
}

PeerEndpoints peer_endpoints(const ClusterConfig& cluster, int peer_count, int peer) {
  ConfigErrors errors;
  check_cluster_fits(cluster, peer_count, errors);
  if (peer < 0 || peer >= peer_count) {
    errors.add("", "peer " + std::to_string(peer) + " is out of range for " +
                       std::to_string(peer_count) + " peers");
  }
  errors.throw_if_any("[cluster]");
  if (!cluster.endpoints.empty()) {
    // Validated when the table was read; parse again for host and port.
    std::optional<TcpEndpoint> e = parse_tcp_endpoint(cluster.endpoints[peer]);
    if (!e) throw ConfigError("cluster.endpoints[" + std::to_string(peer) + "]: invalid endpoint");
    return endpoints_of(e->host, e->port, false, false);
  }
  const auto& hosts = hosts_or_default(cluster);
  const Placement p = place(peer, peer_count, static_cast<int>(hosts.size()));
  const bool ipc = uses_ipc(cluster);
  return endpoints_of(hosts[p.host], cluster.base_port + p.local_index, ipc,
                      ipc && cluster.local_transport == "shm");
}

}  // namespace fastk::node
