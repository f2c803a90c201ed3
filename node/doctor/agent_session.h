// The launcher's side of one host's doctor agent (agent.h): the process (ssh, or a child on
// this machine), the JSON lines it sends, the other lines it printed (ssh's complaints), and
// what to tell the user when it never reported.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "node/doctor/host_check.h"
#include "node/launch/child_process.h"

namespace fastk::node::doctor {

class AgentSession {
 public:
  // Starts `argv` (already wrapped in ssh for a remote host) with a stdin pipe.
  AgentSession(std::string host, bool remote, std::string fastk_path,
               const std::vector<std::string>& argv);

  // The value under `key` of the next JSON line the agent sends, waiting at most `timeout`;
  // nullopt when the agent ended or the time passed.
  std::optional<nlohmann::json> next(const std::string& key, std::chrono::milliseconds timeout);
  bool request(const std::string& line) { return process_.write_stdin(line + "\n"); }
  // Closes its stdin and waits (briefly) for it to end.
  void finish();

  const std::string& host() const { return host_; }
  bool remote() const { return remote_; }
  std::optional<HostReport> report;  // set once the agent reported
  // Why no report came, with what to do (after next() returned nullopt for the report).
  std::string why_no_report() const;

 private:
  bool has_output(const std::string& text) const;
  std::string line_with(const std::string& text) const;  // the first, or ""

  std::string host_;
  bool remote_;
  std::string fastk_path_;
  ChildProcess process_;
  std::deque<nlohmann::json> pending_;
  std::vector<std::string> other_lines_;
  bool timed_out_ = false;
};

}  // namespace fastk::node::doctor
