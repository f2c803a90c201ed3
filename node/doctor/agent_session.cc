#include "node/doctor/agent_session.h"

#include <poll.h>

#include <thread>

#include "isa/startup_check.h"
#include "node/doctor/agent.h"
#include "node/os/fatal_signals.h"

namespace fastk::node::doctor {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

AgentSession::AgentSession(std::string host, bool remote, std::string fastk_path,
                           const std::vector<std::string>& argv)
    : host_(std::move(host)),
      remote_(remote),
      fastk_path_(std::move(fastk_path)),
      process_(argv, /*stdin_pipe=*/true) {}

std::optional<nlohmann::json> AgentSession::next(const std::string& key,
                                                 std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  const std::string prefix = kAgentLine;
  while (true) {
    while (!pending_.empty()) {
      nlohmann::json j = std::move(pending_.front());
      pending_.pop_front();
      if (j.contains(key)) return j[key];
    }
    if (process_.output_fd() < 0) return std::nullopt;  // the agent ended
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) {
      timed_out_ = true;
      return std::nullopt;
    }
    pollfd fd{process_.output_fd(), POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 200)));
    for (auto& line : process_.read_lines()) {
      if (line.starts_with(prefix)) {
        auto j = nlohmann::json::parse(line.substr(prefix.size()), nullptr, false);
        if (!j.is_discarded()) pending_.push_back(std::move(j));
      } else {
        other_lines_.push_back(std::move(line));
      }
    }
  }
}

void AgentSession::finish() {
  process_.close_stdin();
  for (int i = 0; i < 50 && !process_.poll_exit(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool AgentSession::has_output(const std::string& text) const { return !line_with(text).empty(); }

std::string AgentSession::line_with(const std::string& text) const {
  for (const auto& line : other_lines_)
    if (line.find(text) != std::string::npos) return line;
  return "";
}

std::string AgentSession::why_no_report() const {
  const std::string ssh = "ssh -o BatchMode=yes " + host_;
  if (timed_out_) {
    return "no report from " + host_ + " in time (a hung ssh login, or slow disks for the " +
           "data checksums?): try `" + ssh + " true`";
  }
  if (remote_ && has_output("Connection refused")) {
    return "no sshd answers on " + host_ + " (connection refused on the ssh port): start " +
           "sshd there (systemctl start ssh), or check the address in [cluster] hosts";
  }
  if (remote_ && has_output("Permission denied")) {
    return host_ + " refused the ssh login: fastk needs key-based login (BatchMode); run " +
           "ssh-copy-id " + host_ + ", then check with `" + ssh + " true`";
  }
  if (remote_ && has_output("Could not resolve")) {
    return "the host name " + host_ + " does not resolve: give its address in [cluster] hosts";
  }
  if (remote_ && (has_output("timed out") || has_output("No route") || has_output("unreachable") ||
                  has_output("Connection closed"))) {
    return host_ + " does not answer ssh (down, unreachable or filtered): check that it is up " +
           "and that `" + ssh + " true` works from here";
  }
  if (has_output("Host key verification failed")) {
    return "ssh does not know " + host_ + "'s host key: log in once by hand (" + ssh +
           " true) to accept it";
  }
  // The binary there cannot run on that CPU: its start-up check says why (startup_check.h),
  // or, without one, it died of the signal (fatal_signals.h).
  if (const std::string refused = line_with(isa::kRefusedPrefix); !refused.empty()) {
    return host_ + " would crash: " + refused;
  }
  if (const std::string died = line_with(os::kDiedLine); !died.empty()) {
    return host_ + " would crash: its doctor agent (" + fastk_path_ + ") was killed by " +
           died.substr(std::string(os::kDiedLine).size());
  }
  if (has_output(fastk_path_ + ": No such file") || has_output("command not found") ||
      has_output("not found")) {
    return "fastk is not at " + fastk_path_ + " on " + host_ +
           ": build or copy the same fastk there, or give its path with --remote-fastk";
  }
  std::string last = other_lines_.empty() ? "no output" : other_lines_.back();
  return "the doctor agent on " + host_ + " failed: " + last;
}

}  // namespace fastk::node::doctor
