// [cluster]: hosts + base_port or explicit endpoints, and the peer time-outs.
#include <set>

#include "node/config/cluster.h"
#include "node/config/tables.h"

namespace fastk::node {

void read_string_list(TableReader& t, std::string_view key, std::vector<std::string>& out) {
  const toml::node* n = t.node(key);
  if (!n) return;
  const toml::array* array = n->as_array();
  if (!array) {
    t.errors().add(t.path_of(key), "expected an array of strings");
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string path = t.path_of(key) + "[" + std::to_string(i) + "]";
    if (auto s = (*array)[i].value_exact<std::string>()) {
      out.push_back(*s);
    } else {
      t.errors().add(path, "expected a string");
    }
  }
}

namespace {

// Records an error for every entry equal to an earlier one.
void check_unique(TableReader& t, std::string_view key, const std::vector<std::string>& values,
                  const std::vector<std::string>& normalised) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!seen.insert(normalised[i]).second) {
      t.errors().add(t.path_of(key) + "[" + std::to_string(i) + "]",
                     "duplicate \"" + values[i] + "\": two peers cannot share an endpoint");
    }
  }
}

}  // namespace

void read_cluster_table(TableReader& t, ClusterConfig& cluster, int peer_count) {
  read_string_list(t, "hosts", cluster.hosts);
  t.read("base_port", cluster.base_port, 1, 65535);
  read_string_list(t, "endpoints", cluster.endpoints);
  t.read("peer_timeout_ms", cluster.peer_timeout_ms, 1);
  t.read("startup_timeout_ms", cluster.startup_timeout_ms, 1);
  t.read("local_transport", cluster.local_transport);
  t.read("bind_cpus", cluster.bind_cpus);
  t.finish();
  if (cluster.local_transport != "shm" && cluster.local_transport != "ipc" &&
      cluster.local_transport != "tcp") {
    t.errors().add(t.path_of("local_transport"),
                   "expected \"shm\", \"ipc\" or \"tcp\", got \"" + cluster.local_transport + "\"");
  }

  if (!cluster.hosts.empty() && !cluster.endpoints.empty()) {
    t.errors().add(t.path_of("endpoints"), "set either hosts (with base_port) or endpoints");
    return;
  }
  for (std::size_t i = 0; i < cluster.hosts.size(); ++i) {
    if (!valid_host(cluster.hosts[i])) {
      t.errors().add(t.path_of("hosts") + "[" + std::to_string(i) + "]",
                     "\"" + cluster.hosts[i] + "\" is not a host name or IPv4 address");
    }
  }
  check_unique(t, "hosts", cluster.hosts, cluster.hosts);
  std::vector<std::string> normalised;
  bool all_valid = true;
  for (std::size_t i = 0; i < cluster.endpoints.size(); ++i) {
    std::optional<TcpEndpoint> e = parse_tcp_endpoint(cluster.endpoints[i]);
    if (!e) {
      all_valid = false;
      t.errors().add(t.path_of("endpoints") + "[" + std::to_string(i) + "]",
                     "expected \"tcp://host:port\" with a port in 1..65535, got \"" +
                         cluster.endpoints[i] + "\"");
      continue;
    }
    normalised.push_back(e->host + ":" + std::to_string(e->port));
  }
  if (all_valid) check_unique(t, "endpoints", cluster.endpoints, normalised);
  // Peer count 0: taken from an edge-list file later; peer_endpoints() checks then.
  if (peer_count > 0) check_cluster_fits(cluster, peer_count, t.errors());
}

nlohmann::ordered_json cluster_table_json(const ClusterConfig& c) {
  return {{"hosts", c.hosts},
          {"base_port", c.base_port},
          {"endpoints", c.endpoints},
          {"peer_timeout_ms", c.peer_timeout_ms},
          {"startup_timeout_ms", c.startup_timeout_ms},
          {"local_transport", c.local_transport},
          {"bind_cpus", c.bind_cpus}};
}

}  // namespace fastk::node
