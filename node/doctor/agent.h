// The part of `fastk doctor` that runs on each host (`fastk doctor CONFIG --agent HOST`,
// started over ssh, or as a child on the launcher's own machine). It binds the ports of the
// peers [cluster] places on HOST, so that they can be probed and a port another program holds
// shows, then prints its HostReport (host_check.h) and answers probe requests until its stdin
// closes. Each line it writes for the launcher starts with kAgentLine; anything else (ssh's or
// the shell's complaints) is kept as the reason when no report comes.
//
//   launcher -> agent:  probe ENDPOINT BYTES TIMEOUT_MS
//   agent -> launcher:  @doctor {"report": {...}}   once, first
//                       @doctor {"probe": {"endpoint":..., "reached":..., ...}}   per request
#pragma once

#include <iosfwd>
#include <string>

#include "node/config/experiment_config.h"

namespace fastk::node::doctor {

inline constexpr const char* kAgentLine = "@doctor ";

// The host [cluster] places `peer` on, as written there ("127.0.0.1" for a local run).
std::string peer_host(const ClusterConfig& cluster, int peer_count, int peer);

// Serves until `in` ends; returns the exit code.
int run_agent(const std::filesystem::path& config_path, const ExperimentConfig& config,
              const std::string& host, std::istream& in, std::ostream& out);

}  // namespace fastk::node::doctor
