// The part of `fastk doctor` that runs on each host (`fastk doctor CONFIG --agent HOST`,
// started over ssh, or as a child on the launcher's own machine). It binds the ports of the
// peers [cluster] places on HOST, so that they can be probed and a port another program holds
// shows, then prints its HostReport (host_check.h) and answers probe requests until its stdin
// closes. Each line it writes for the launcher starts with kAgentLine; anything else (ssh's or
// the shell's complaints) is kept as the reason when no report comes.
//
//   launcher -> agent:  probe ENDPOINT BYTES TIMEOUT_MS
//   agent -> launcher:  @doctor {"report": {...}}   once, first (after timing a gradient in a
//                                                   child: `fastk doctor CONFIG --time-gradient`)
//                       @doctor {"probe": {"endpoint":..., "reached":..., ...}}   per request
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"

namespace fastk::node::doctor {

inline constexpr const char* kAgentLine = "@doctor ";

// The host [cluster] places `peer` on, as written there ("127.0.0.1" for a local run).
std::string peer_host(const ClusterConfig& cluster, int peer_count, int peer);

struct AgentOptions {
  std::filesystem::path config_path;
  std::vector<std::string> overrides;  // --set, for the gradient's child
  std::string host;
  bool time_gradient = true;
};

// Serves until `in` ends; returns the exit code.
int run_agent(const AgentOptions& options, const ExperimentConfig& config, std::istream& in,
              std::ostream& out);

// What `fastk doctor CONFIG --time-gradient` does, in the agent's child: times one gradient of
// the config's model (measure.h) and prints it as `@doctor {"gradient": {...}}`.
int time_gradient(const ExperimentConfig& config, std::ostream& out);

}  // namespace fastk::node::doctor
