#include "node/doctor/agent.h"

#include <istream>
#include <ostream>
#include <sstream>

#include "isa/startup_check.h"
#include "node/config/cluster.h"
#include "node/doctor/host_check.h"
#include "node/launch/launcher.h"
#include "node/measure/measure.h"
#include "node/os/fatal_signals.h"
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

// Times a gradient in a child running this binary, so that a gradient that dies (an
// instruction this CPU lacks) is a finding about this host rather than the agent's end.
GradientCheck gradient_in_child(const AgentOptions& options) {
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "doctor", std::filesystem::absolute(options.config_path)};
  for (const auto& s : options.overrides) argv.insert(argv.end(), {"--set", s});
  argv.push_back("--time-gradient");
  ChildProcess child(argv);
  GradientCheck check;
  PeerOutcome outcome;  // the launcher's reading of how a process ended (launcher.h)
  std::string last;
  const std::string prefix = kAgentLine;
  outcome.status = child.wait([&](const std::string& line) {
    if (line.starts_with(prefix)) {
      const auto j = nlohmann::json::parse(line.substr(prefix.size()), nullptr, false);
      if (!j.is_discarded() && j.contains("gradient")) {
        check.plain_s = j["gradient"].value("plain_s", 0.0);
        check.with_noise_s = j["gradient"].value("with_noise_s", 0.0);
        check.parameters = j["gradient"].value("parameters", std::size_t{0});
        check.measured = true;
      }
    } else if (line.starts_with(os::kDiedLine)) {
      outcome.died = line.substr(std::string(os::kDiedLine).size());
    } else if (!line.empty()) {
      if (line.starts_with(isa::kRefusedPrefix)) outcome.refused = line;
      last = line;
    }
  });
  if (outcome.status.ok() && check.measured) return check;
  check.measured = false;
  const std::string said = !outcome.refused.empty() ? outcome.refused
                           : !outcome.died.empty()  ? outcome.died
                                                    : last;
  check.crashed = !outcome.refused.empty() || !outcome.died.empty() || !end_signal(outcome).empty();
  check.failure = (outcome.status.ok() ? std::string("no time reported") : short_end(outcome)) +
                  (said.empty() ? "" : ": " + said);
  return check;
}

}  // namespace

int time_gradient(const ExperimentConfig& config, std::ostream& out) {
  const measure::GradientMeasurement g = measure::measure_gradients(config, 20);
  out << kAgentLine
      << nlohmann::json{{"gradient",
                         {{"plain_s", g.plain_s},
                          {"with_noise_s", g.with_noise_s},
                          {"parameters", g.parameters}}}}
             .dump()
      << std::endl;
  return 0;
}

std::string peer_host(const ClusterConfig& cluster, int peer_count, int peer) {
  const auto where = parse_tcp_endpoint(peer_endpoints(cluster, peer_count, peer).connect);
  return where ? where->host : "127.0.0.1";
}

int run_agent(const AgentOptions& options, const ExperimentConfig& config, std::istream& in,
              std::ostream& out) {
  const std::string& host = options.host;
  const int n = topology::build_topology(config.topology).graph.size();
  HostReport report{.version = kVersion,
                    .binary_crc32c = own_binary_crc32c(),
                    .files = check_files(options.config_path, config),
                    .ports = {},
                    .isa = own_isa(),
                    .gradient = {}};
  std::vector<std::string> binds;
  for (int peer = 0; peer < n; ++peer) {
    if (peer_host(config.cluster, n, peer) != host) continue;
    const PeerEndpoints e = peer_endpoints(config.cluster, n, peer);
    report.ports.push_back({.peer = peer, .endpoint = e.bind, .error = {}});
    binds.push_back(e.bind);
  }
  const transport::ProbeServer server(binds);  // holds the ports while the agent runs
  for (std::size_t i = 0; i < binds.size(); ++i) report.ports[i].error = server.bind_errors()[i];
  if (options.time_gradient) report.gradient = gradient_in_child(options);
  out << kAgentLine << nlohmann::json{{"report", to_json(report)}}.dump() << std::endl;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    out << kAgentLine << nlohmann::json{{"probe", probe(line)}}.dump() << std::endl;
  }
  return 0;
}

}  // namespace fastk::node::doctor
