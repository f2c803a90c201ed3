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

#include "isa/startup_check.h"
#include "node/os/fatal_signals.h"

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
  std::vector<std::string> restarted_after;
  std::string died;     // its "@died" line, without the prefix
  std::string refused;  // its start-up check's refusal line
  bool away = false;    // asked to leave on [churn]'s schedule, not back yet
  bool left = false;    // and it did (its @left line): it may come back
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

namespace {

// One launch of the peers, from starting their processes to collecting how each ended. Each
// turn of run()'s loop reads their output, acts on the launcher's requests and shows
// progress.
class Launch {
 public:
  Launch(const std::vector<PeerLaunch>& peers, const LaunchOptions& options, std::ostream& status)
      : options_(options), status_(status) {
    start(peers);
  }

  LaunchResult run() {
    for (;;) {
      wait_for_output();
      read_output();
      // One look decides the end: a peer gone by then and not restarted stays gone.
      const std::size_t gone_now = gone();
      const bool restarted = restart_failed() | churn();
      control();
      show_progress(gone_now);
      if (gone_now == running_.size() && !restarted) break;
    }
    if (options_.live_progress && options_.terminal) status_ << "\r\033[K" << std::flush;
    return outcomes();
  }

 private:
  void start(const std::vector<PeerLaunch>& peers) {
    std::filesystem::create_directories(options_.log_dir);
    running_.resize(peers.size());
    for (std::size_t i = 0; i < peers.size(); ++i) {
      RunningPeer& r = running_[i];
      r.launch = peers[i];
      r.log_path = options_.log_dir / ("peer-" + std::to_string(peers[i].peer) + ".log");
      r.log.open(r.log_path);
      if (!r.log) throw std::runtime_error("cannot write log file " + r.log_path.string());
      const auto argv = command(peers[i], peers[i].argv);
      // Every peer stops when its stdin closes: a remote one because signals do not cross
      // ssh, and any peer when the launcher dies (even by SIGKILL: the kernel closes the
      // pipe), so that it ends cleanly and leaves its outputs instead of being orphaned.
      r.process = std::make_unique<ChildProcess>(argv, /*stdin_pipe=*/true);
    }
  }

  void wait_for_output() {
    std::vector<pollfd> fds;
    for (auto& r : running_)
      if (r.process->output_fd() >= 0) fds.push_back({r.process->output_fd(), POLLIN, 0});
    poll(fds.data(), fds.size(), 100);
  }

  // A peer is gone once it has exited and its output is read to the end. Counted afresh each
  // time from the processes themselves: a peer can exit between two looks (its pipe closes
  // before the kernel lets it be reaped), so a count kept across steps can go wrong.
  std::size_t gone() {
    return static_cast<std::size_t>(
        std::count_if(running_.begin(), running_.end(), [](RunningPeer& r) {
          return r.process->poll_exit().has_value() && r.process->output_fd() < 0;
        }));
  }

  // Every peer's new lines into its log, its progress, readiness and last lines.
  void read_output() {
    for (auto& r : running_) {
      for (auto& line : r.process->read_lines()) take_line(r, std::move(line));
      r.log.flush();
      if (r.process->poll_exit()) {
        if (!r.exited_at) r.exited_at = Clock::now();
        // Output normally ends with the process; something it left behind may hold the
        // pipe open, so stop waiting for it shortly after the peer itself is gone.
        if (r.process->output_fd() >= 0 && seconds_since(*r.exited_at) > kOutputDrain_s) {
          r.process->stop_reading();
        }
      }
    }
  }

  // A peer that failed after the go (its output read to the end) is started again with its
  // restart_argv while it has restarts left and the run is not being stopped or finished.
  bool restart_failed() {
    bool restarted = false;
    const bool running = (started_ || !options_.start_together) && !stop_requested_ &&
                         !result_.finished && !options_.should_stop();
    for (auto& r : running_) {
      const auto status = r.process->poll_exit();
      if (!running || r.away || !status || status->ok() || r.process->output_fd() >= 0 ||
          r.launch.restart_argv.empty() ||
          static_cast<int>(r.restarted_after.size()) >= options_.restart_failed) {
        continue;
      }
      r.restarted_after.push_back(status->describe());
      r.died.clear();
      r.refused.clear();
      const std::string note =
          "fastk run: peer " + std::to_string(r.launch.peer) + " failed (" + status->describe() +
          "; last reported iteration " + std::to_string(r.progress ? r.progress->iteration : 0) +
          "); restarting it (restart " + std::to_string(r.restarted_after.size()) + " of " +
          std::to_string(options_.restart_failed) + ")";
      r.log << note << '\n';
      if (options_.terminal) status_ << "\r\033[K";
      status_ << note << std::endl;
      r.process = std::make_unique<ChildProcess>(command(r.launch, r.launch.restart_argv),
                                                 /*stdin_pipe=*/true);
      r.exited_at.reset();
      restarted = true;
    }
    return restarted;
  }

  // The churn events due since the go: leaves are asked at once, a join waits for its peer's
  // process to have exited (it may still be saying goodbye). Returns whether a peer started.
  bool churn() {
    const bool running = (started_ || !options_.start_together) && !stop_requested_ &&
                         !result_.finished && !options_.should_stop();
    if (!running) return false;
    const double since_go = seconds_since(go_at_);
    while (next_churn_ < options_.churn.size() && options_.churn[next_churn_].at_s <= since_go) {
      churn_due_.push_back(options_.churn[next_churn_++]);
    }
    bool started = false;
    for (auto e = churn_due_.begin(); e != churn_due_.end();) {
      RunningPeer* r = peer_of(e->peer);
      const bool leave = e->kind == ChurnEvent::Kind::kLeave;
      const bool exited = r && r->process->poll_exit() && r->process->output_fd() < 0;
      if (r && !leave && r->away && !exited) {
        ++e;  // still saying goodbye
        continue;
      }
      std::string what;  // nothing: the peer has ended (a join without a leave is skipped)
      if (r && leave && !r->process->poll_exit()) {
        r->process->write_stdin("l");
        r->away = true;
        what = " leaves";
      } else if (r && !leave && r->away && r->left) {
        r->process = std::make_unique<ChildProcess>(command(r->launch, r->launch.restart_argv),
                                                    /*stdin_pipe=*/true);
        r->exited_at.reset();
        r->away = r->left = false;
        started = true;
        what = " comes back";
      } else if (r && !leave && r->away) {
        r->away = false;  // it had finished when asked to leave: nothing to come back to
        what = " does not come back: it had finished when asked to leave";
      }
      if (!what.empty()) {
        const std::string note = "fastk run: peer " + std::to_string(e->peer) + what +
                                 " ([churn], " + std::to_string(since_go) + " s after the go)";
        r->log << note << '\n';
        if (options_.terminal) status_ << "\r\033[K";
        status_ << note << std::endl;
      }
      e = churn_due_.erase(e);
    }
    return started;
  }

  RunningPeer* peer_of(int peer) {
    for (auto& r : running_)
      if (r.launch.peer == peer) return &r;
    return nullptr;
  }

  std::vector<std::string> command(const PeerLaunch& launch,
                                   const std::vector<std::string>& argv) const {
    if (launch.host.empty()) return argv;
    return ssh_command(options_.ssh, launch.host, options_.remote_dir, argv);
  }

  static void take_line(RunningPeer& r, std::string line) {
    r.log << line << '\n';
    if (auto p = parse_progress(line)) {
      r.progress = p;
    } else if (line == kLeftLine) {
      r.left = true;
    } else if (line == kReadyLine) {
      r.ready = true;
    } else if (line.starts_with(os::kDiedLine)) {
      r.died = line.substr(std::string(os::kDiedLine).size());
    } else {
      if (line.starts_with(isa::kRefusedPrefix)) r.refused = line;
      r.tail.push_back(std::move(line));
      if (r.tail.size() > kTailLines) r.tail.pop_front();
    }
  }

  // Stop (asked, or a peer died before the start), start together, finish, kill after grace.
  void control() {
    if (options_.start_together && !started_ && !stop_requested_) {
      for (auto& r : running_) {
        if (!r.ready && r.process->poll_exit()) result_.exited_before_start = r.launch.peer;
      }
    }
    const bool stop_by_request = !stop_requested_ && options_.should_stop();
    if (stop_by_request || (!stop_requested_ && result_.exited_before_start)) {
      stop_requested_ = Clock::now();
      result_.stopped = stop_by_request;
      stop_all();
    }
    if (options_.start_together && !started_ &&
        std::all_of(running_.begin(), running_.end(),
                    [](const RunningPeer& r) { return r.ready; })) {
      started_ = true;
      go_at_ = Clock::now();
      for (auto& r : running_) tell(r, SIGUSR2, "g");
    }
    if (!result_.finished && !stop_requested_ && options_.should_finish()) {
      result_.finished = true;
      for (auto& r : running_) tell(r, SIGUSR1, "f");
    }
    if (stop_requested_ && !killed_ && seconds_since(*stop_requested_) > options_.stop_grace_s) {
      killed_ = true;
      for (auto& r : running_) r.process->send_signal(SIGKILL);
    }
  }

  // Local peers get SIGTERM; a remote peer gets end of file on stdin, because killing the
  // ssh client would cut it off before it writes its metrics.
  void stop_all() {
    for (auto& r : running_) {
      if (r.launch.host.empty()) {
        r.process->send_signal(SIGTERM);
      } else {
        r.process->close_stdin();
      }
    }
  }

  void show_progress(std::size_t gone_now) {
    const double every =
        options_.terminal ? options_.progress_interval_s : options_.plain_progress_interval_s;
    if (!options_.live_progress || seconds_since(last_summary_) < every) return;
    last_summary_ = Clock::now();
    std::vector<std::optional<PeerProgress>> latest;
    for (auto& r : running_) latest.push_back(r.progress);
    std::string line = summarize_progress(latest, static_cast<int>(running_.size() - gone_now)) +
                       options_.status_extra();
    if (options_.terminal) {
      status_ << "\r\033[K" << line << std::flush;
    } else {
      status_ << line << '\n' << std::flush;
    }
  }

  LaunchResult outcomes() {
    for (auto& r : running_) {
      PeerOutcome o;
      o.peer = r.launch.peer;
      o.host = r.launch.host;
      o.status = *r.process->poll_exit();
      o.log = r.log_path;
      o.last_progress = r.progress;
      o.last_lines.assign(r.tail.begin(), r.tail.end());
      o.restarted_after = r.restarted_after;
      o.died = r.died;
      o.refused = r.refused;
      result_.peers.push_back(std::move(o));
    }
    return std::move(result_);
  }

  const LaunchOptions& options_;
  std::ostream& status_;
  std::vector<RunningPeer> running_;
  LaunchResult result_;
  std::optional<Clock::time_point> stop_requested_;
  bool killed_ = false;
  bool started_ = false;                    // start_together: the go was given
  Clock::time_point go_at_ = Clock::now();  // the go (start_together), else the launch
  std::size_t next_churn_ = 0;              // options_.churn: the first not yet due
  std::vector<ChurnEvent> churn_due_;       // due, not yet carried out
  Clock::time_point last_summary_ = Clock::now();
};

}  // namespace

LaunchResult launch_peers(const std::vector<PeerLaunch>& peers, const LaunchOptions& options,
                          std::ostream& status) {
  return Launch(peers, options, status).run();
}

bool ssh_failed(const PeerOutcome& peer) {
  return !peer.host.empty() && peer.status.signal == 0 && peer.status.code == kSshFailed &&
         peer.died.empty();
}

std::string end_signal(const PeerOutcome& peer) {
  if (peer.status.signal != 0) {
    const std::string described = peer.status.describe();  // "killed by SIGILL"
    return described.substr(described.rfind(' ') + 1);
  }
  if (!peer.died.empty()) return peer.died.substr(0, peer.died.find(' '));
  return "";
}

std::string short_end(const PeerOutcome& peer) {
  if (peer.status.ok()) return "";
  if (!peer.refused.empty() && peer.status.code == isa::kCpuRefusedExitCode) {
    return "refused to start (exit code " + std::to_string(peer.status.code) + ")";
  }
  const std::string signal = end_signal(peer);
  return signal.empty() ? peer.status.describe() : "killed by " + signal;
}

std::string how_it_ended(const PeerOutcome& peer) {
  const std::string end = short_end(peer);
  if (end.empty()) return "";
  const std::string where = peer.host.empty() ? "this machine" : peer.host;
  if (!peer.refused.empty() && peer.status.code == isa::kCpuRefusedExitCode) {
    return end + " on " + where + ": " + peer.refused;
  }
  if (!peer.died.empty()) {  // "SIGILL at start-up (...): ...": the signal, then the rest
    const std::size_t space = peer.died.find(' ');
    return end + " on " + where + (space == std::string::npos ? "" : peer.died.substr(space));
  }
  const std::string when = peer.last_progress
                               ? " after iteration " + std::to_string(peer.last_progress->iteration)
                               : " at start-up";
  return end + " on " + where + when;
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
        << short_end(p) << ")";
    if (!p.refused.empty()) out << ": " << p.refused;
    if (p.refused.empty() && !p.died.empty()) out << ": " << p.died;
    if (ssh_failed(p)) {
      out << ": ssh to " << p.host << " ended"
          << (p.last_progress ? " after iteration " + std::to_string(p.last_progress->iteration)
                              : std::string())
          << "; it could not connect or lost its connection (the host, its sshd or its network "
             "link is down: `fastk doctor` checks them), or the peer there was killed by a "
             "signal";
    }
    if (!p.restarted_after.empty()) {
      out << " after " << p.restarted_after.size() << " restart(s)";
    }
    out << "; log: " << p.log.string() << "\n";
    for (const auto& line : p.last_lines) out << "    | " << line << "\n";
  }
  return out.str();
}

}  // namespace fastk::node
