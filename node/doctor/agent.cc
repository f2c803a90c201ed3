#include "node/doctor/agent.h"

#include <istream>
#include <ostream>
#include <sstream>

#include "node/config/cluster.h"
#include "node/doctor/host_check.h"
#include "node/transport/probe.h"
#include "topology/topology.h"

namespace fastk::node::doctor {
namespace {

nlohmann::json probe(const std::string& request) {
  std::istringstream words(request);
  std::string command, endpoint;
  std::int64_t bytes = 0, timeout_ms = 0;
  if (!(words >> command >> endpoint >> bytes >> timeout_ms) || command != "probe") {
    return {{"error", "not a probe request: " + request}};
  }
  transport::ProbeResult r;
  try {
    r = transport::probe_endpoint(endpoint, bytes, std::chrono::milliseconds(timeout_ms));
  } catch (const std::exception& e) {  // ZeroMQ refused the endpoint or a socket option
    r.error = e.what();
  }
  return {{"endpoint", endpoint},
          {"reached", r.reached},
          {"round_trip_s", r.round_trip_s},
          {"bits_per_s", r.bits_per_s},
          {"error", r.error}};
}

}  // namespace

std::string peer_host(const ClusterConfig& cluster, int peer_count, int peer) {
  const auto where = parse_tcp_endpoint(peer_endpoints(cluster, peer_count, peer).connect);
  return where ? where->host : "127.0.0.1";
}

int run_agent(const std::filesystem::path& config_path, const ExperimentConfig& config,
              const std::string& host, std::istream& in, std::ostream& out) {
  const int n = topology::build_topology(config.topology).graph.size();
  HostReport report{.version = kVersion,
                    .binary_crc32c = own_binary_crc32c(),
                    .files = check_files(config_path, config),
                    .ports = {}};
  std::vector<std::string> binds;
  for (int peer = 0; peer < n; ++peer) {
    if (peer_host(config.cluster, n, peer) != host) continue;
    const PeerEndpoints e = peer_endpoints(config.cluster, n, peer);
    report.ports.push_back({.peer = peer, .endpoint = e.bind, .error = {}});
    binds.push_back(e.bind);
  }
  const transport::ProbeServer server(binds);  // holds the ports while the agent runs
  for (std::size_t i = 0; i < binds.size(); ++i) report.ports[i].error = server.bind_errors()[i];
  out << kAgentLine << nlohmann::json{{"report", to_json(report)}}.dump() << std::endl;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    out << kAgentLine << nlohmann::json{{"probe", probe(line)}}.dump() << std::endl;
  }
  return 0;
}

}  // namespace fastk::node::doctor
