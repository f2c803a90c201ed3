#include "node/launch/launcher.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace fastk::node {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kTailLines = 8;
constexpr double kOutputDrain_s = 1.0;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string single_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct RunningPeer {
  PeerLaunch launch;
  std::unique_ptr<ChildProcess> process;
  std::ofstream log;
  std::filesystem::path log_path;
  std::optional<PeerProgress> progress;
  bool ready = false;  // printed "@ready"
  std::deque<std::string> tail;
  std::optional<Clock::time_point> exited_at;
};

// Signals do not cross ssh: a local peer gets `signal`, a remote one `byte` on its stdin
// (fastk node --stop-on-stdin-eof reads both alike).
void tell(RunningPeer& r, int signal, const char* byte) {
  if (r.launch.host.empty()) {
    r.process->send_signal(signal);
  } else {
    r.process->write_stdin(byte);
  }
}

}  // namespace

bool LaunchResult::ok() const {
  if (stopped || exited_before_start) return false;
  for (const auto& p : peers)
    if (!p.status.ok()) return false;
  return true;
}

std::vector<std::string> ssh_command(const std::vector<std::string>& ssh, const std::string& host,
                                     const std::string& remote_dir,
                                     const std::vector<std::string>& argv) {
  std::string remote = remote_dir.empty() ? "" : "cd " + single_quote(remote_dir) + " && ";
  remote += "exec";
  for (const auto& a : argv) remote += " " + single_quote(a);
  std::vector<std::string> command = ssh;
  command.push_back(host);
  command.push_back(remote);
  return command;
}

LaunchResult launch_peers(const std::vector<PeerLaunch>& peers, const LaunchOptions& options,
                          std::ostream& status) {
  std::filesystem::create_directories(options.log_dir);
  std::vector<RunningPeer> running(peers.size());
  for (std::size_t i = 0; i < peers.size(); ++i) {
    RunningPeer& r = running[i];
    r.launch = peers[i];
    r.log_path = options.log_dir / ("peer-" + std::to_string(peers[i].peer) + ".log");
    r.log.open(r.log_path);
    if (!r.log) throw std::runtime_error("cannot write log file " + r.log_path.string());
    const bool remote = !peers[i].host.empty();
    auto argv = remote ? ssh_command(options.ssh, peers[i].host, options.remote_dir, peers[i].argv)
                       : peers[i].argv;
    // A remote peer stops when its stdin closes (signals do not cross ssh).
    r.process = std::make_unique<ChildProcess>(argv, /*stdin_pipe=*/remote);
  }

  LaunchResult result;
  std::optional<Clock::time_point> stop_requested;
  bool killed = false;
  bool started = false;  // start_together: the go was given
  Clock::time_point last_summary = Clock::now();
  const double summary_every =
      options.terminal ? options.progress_interval_s : options.plain_progress_interval_s;
  std::size_t exited = 0;
  while (exited < running.size()) {
    std::vector<pollfd> fds;
    for (auto& r : running)
      if (r.process->output_fd() >= 0) fds.push_back({r.process->output_fd(), POLLIN, 0});
    poll(fds.data(), fds.size(), 100);

    exited = 0;
    for (auto& r : running) {
      for (auto& line : r.process->read_lines()) {
        r.log << line << '\n';
        if (auto p = parse_progress(line)) {
          r.progress = p;
          continue;
        }
        if (line == kReadyLine) {
          r.ready = true;
          continue;
        }
        r.tail.push_back(std::move(line));
        if (r.tail.size() > kTailLines) r.tail.pop_front();
      }
      r.log.flush();
      if (r.process->poll_exit()) {
        if (!r.exited_at) r.exited_at = Clock::now();
        // Output normally ends with the process; something it left behind may hold the
        // pipe open, so stop waiting for it shortly after the peer itself is gone.
        if (r.process->output_fd() >= 0 && seconds_since(*r.exited_at) > kOutputDrain_s) {
          r.process->stop_reading();
        }
        if (r.process->output_fd() < 0) ++exited;
      }
    }

    if (options.start_together && !started && !stop_requested) {
      for (auto& r : running) {
        if (!r.ready && r.process->poll_exit()) result.exited_before_start = r.launch.peer;
      }
    }
    const bool stop_by_request = !stop_requested && options.should_stop();
    if (stop_by_request || (!stop_requested && result.exited_before_start)) {
      stop_requested = Clock::now();
      result.stopped = stop_by_request;
      for (auto& r : running) {
        // Local peers get SIGTERM; a remote peer gets end of file on stdin, because killing
        // the ssh client would cut it off before it writes its metrics.
        if (r.launch.host.empty()) {
          r.process->send_signal(SIGTERM);
        } else {
          r.process->close_stdin();
        }
      }
    }
    if (options.start_together && !started &&
        std::all_of(running.begin(), running.end(), [](const RunningPeer& r) { return r.ready; })) {
      started = true;
      for (auto& r : running) tell(r, SIGUSR2, "g");
    }
    if (!result.finished && !stop_requested && options.should_finish()) {
      result.finished = true;
      for (auto& r : running) tell(r, SIGUSR1, "f");
    }
    if (stop_requested && !killed && seconds_since(*stop_requested) > options.stop_grace_s) {
      killed = true;
      for (auto& r : running) r.process->send_signal(SIGKILL);
    }

    if (options.live_progress && seconds_since(last_summary) >= summary_every) {
      last_summary = Clock::now();
      std::vector<std::optional<PeerProgress>> latest;
      for (auto& r : running) latest.push_back(r.progress);
      std::string line = summarize_progress(latest, static_cast<int>(running.size() - exited)) +
                         options.status_extra();
      if (options.terminal) {
        status << "\r\033[K" << line << std::flush;
      } else {
        status << line << '\n' << std::flush;
      }
    }
  }
  if (options.live_progress && options.terminal) status << "\r\033[K" << std::flush;

  for (auto& r : running) {
    PeerOutcome o;
    o.peer = r.launch.peer;
    o.host = r.launch.host;
    o.status = *r.process->poll_exit();
    o.log = r.log_path;
    o.last_progress = r.progress;
    o.last_lines.assign(r.tail.begin(), r.tail.end());
    result.peers.push_back(std::move(o));
  }
  return result;
}

std::string describe_failures(const LaunchResult& result) {
  std::ostringstream out;
  if (result.exited_before_start) {
    out << "peer " << *result.exited_before_start
        << " exited before it was ready, so the others were stopped:\n";
  }
  for (const auto& p : result.peers) {
    if (p.status.ok()) continue;
    out << "peer " << p.peer << (p.host.empty() ? "" : " on " + p.host) << " failed ("
        << p.status.describe() << "); log: " << p.log.string() << "\n";
    for (const auto& line : p.last_lines) out << "    | " << line << "\n";
  }
  return out.str();
}

}  // namespace fastk::node
