// `fastk doctor CONFIG`: a preflight for a config whose peers run on several hosts. On every
// host of [cluster] it starts an agent (agent.h) the way `fastk run` starts a peer (ssh with
// BatchMode, in the same working directory; a plain child for this machine), and checks:
// ssh login, the same fastk build, the config and data files present and identical to this
// machine's, every peer's port free, and the instruction sets there with a gradient timed by
// the binary that host runs (a host where it would crash is a problem; one much slower than
// the others, a note: host_speed.h). For every edge of the graph between two hosts it then
// probes the receiving peer's port from the sending peer's host (transport/probe.h): reachable,
// round trip, bandwidth. It prints one table per host and per edge, the communication floor of
// an iteration beside the compute time of a gradient, and every problem with the host, peer,
// port and what to do. Exit code 1 when there is a problem, 0 when the run can start.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"

namespace fastk::node::doctor {

struct DoctorOptions {
  std::filesystem::path config_path;
  std::vector<std::string> overrides;  // --set table.key=value, passed on to the agents
  std::string remote_fastk;            // fastk's path on the hosts (default: this binary's)
  std::int64_t probe_bytes = std::int64_t{4} << 20;
  std::chrono::milliseconds probe_timeout{3000};  // for a port's first answer
  std::chrono::seconds agent_timeout{60};         // for a host's report (ssh, checksums)
  bool measure_gradient = true;      // time a gradient on every host (loads the data there)
  std::filesystem::path hosts_json;  // where to write the hosts' gradient times (host_speed.h)
};

int run_doctor(const DoctorOptions& options, const ExperimentConfig& config, std::ostream& out);

}  // namespace fastk::node::doctor
