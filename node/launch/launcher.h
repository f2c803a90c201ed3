// Runs every peer of a run as a child process (locally, or on another host through ssh),
// writes each peer's output to its log file, keeps one live progress line, stops all peers
// on request, and reports which peers failed and where their logs are.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/launch/child_process.h"
#include "node/launch/progress.h"

namespace fastk::node {

struct PeerLaunch {
  int peer = 0;
  std::string host;               // empty: this machine
  std::vector<std::string> argv;  // the command (for a remote host: what ssh runs there)
  // The command that brings the peer back after it failed (LaunchOptions::restart_failed);
  // empty: it is not restarted.
  std::vector<std::string> restart_argv = {};
};

struct LaunchOptions {
  std::filesystem::path log_dir;          // peer-<i>.log files go here
  bool live_progress = true;              // print the summary line
  bool terminal = false;                  // rewrite the line in place (stdout is a TTY)
  double progress_interval_s = 0.5;       // summary refresh on a terminal
  double plain_progress_interval_s = 10;  // summary lines when not a terminal
  double stop_grace_s = 10;               // after a stop request: SIGTERM, then SIGKILL
  std::string remote_dir;                 // ssh: folder to cd into on the remote host
  std::vector<std::string> ssh = {"ssh", "-o", "BatchMode=yes", "-T"};
  // Polled while peers run; true asks every peer to stop (the CLI wires Ctrl-C here).
  std::function<bool()> should_stop = [] { return false; };
  // Polled likewise; true tells every peer the run is done (run.stop_at_target): they end
  // cleanly, as at the end of their iterations. Local peers get SIGUSR1, remote ones an
  // 'f' on stdin.
  std::function<bool()> should_finish = [] { return false; };
  // Peers print "@ready" and wait; once every peer has, all get the go together (local:
  // SIGUSR2; remote: a 'g' on stdin), so they start their first iteration at once.
  bool start_together = false;
  // A peer that fails once all have started (killed, crashed) is started again with its
  // restart_argv, at most this many times per peer; 0: never.
  int restart_failed = 0;
  // [churn] (docs/simulation.md §9), in time order, times from the go: a leave asks its peer
  // to leave ('l' on its stdin: it says goodbye and exits, keeping its checkpoint), a join
  // starts it again with its restart_argv once it has exited.
  std::vector<ChurnEvent> churn;
  // Appended to the progress line (the mean model's accuracy).
  std::function<std::string()> status_extra = [] { return std::string(); };
};

struct PeerOutcome {
  int peer = 0;
  std::string host;
  ExitStatus status;
  std::filesystem::path log;
  std::optional<PeerProgress> last_progress;
  std::vector<std::string> last_lines;  // tail of the log, shown when the peer failed
  // How each earlier process of a restarted peer ended, in order ("killed by signal 9").
  std::vector<std::string> restarted_after;
  // What the peer itself said of its end, without the prefix: its "@died" line
  // (os/fatal_signals.h: "SIGILL at start-up (...): ..."), or its start-up check's refusal
  // (isa/startup_check.h). Empty when it said nothing.
  std::string died;
  std::string refused;
};

struct LaunchResult {
  std::vector<PeerOutcome> peers;
  bool stopped = false;   // a stop was requested
  bool finished = false;  // should_finish() said the run is done
  // start_together: the peer that exited before it was ready; the others were stopped then
  // instead of waiting for a go that could not come.
  std::optional<int> exited_before_start;
  bool ok() const;
};

// The command that runs `argv` on `host` in `remote_dir` through ssh. Arguments are
// single-quoted for the remote shell.
std::vector<std::string> ssh_command(const std::vector<std::string>& ssh, const std::string& host,
                                     const std::string& remote_dir,
                                     const std::vector<std::string>& argv);

// Blocks until every peer has exited. Throws std::runtime_error if a peer cannot be
// started (the ones already started are stopped first) or a log cannot be written.
LaunchResult launch_peers(const std::vector<PeerLaunch>& peers, const LaunchOptions& options,
                          std::ostream& status);

// ssh's own exit code: it could not connect, the connection broke (ServerAlive* options end a
// session whose host went away), or the remote command was killed by a signal. fastk node
// never exits with it.
inline constexpr int kSshFailed = 255;
bool ssh_failed(const PeerOutcome& peer);

// "peer 3 on host-b failed (exit code 1); log: runs/x/logs/peer-3.log" plus its last lines;
// for ssh's own failure, which host, after which iteration and what it may mean; for a peer
// killed by a signal or refused at start-up, what it said of it.
std::string describe_failures(const LaunchResult& result);

// How a peer's process ended, in short: "killed by SIGILL" (from its exit status, or behind
// ssh from its @died line), "refused to start (exit code 3)", "exit code 1"; empty when it
// succeeded.
std::string short_end(const PeerOutcome& peer);
// The signal that ended it, as above ("SIGILL"); empty for none.
std::string end_signal(const PeerOutcome& peer);
// One sentence for the run's table and summary.json: short_end, on which host, when, and what
// the peer said of it. "killed by SIGILL on 10.0.0.12 at start-up (an instruction this CPU does
// not have): fastk built with -march=..., kernels x86-64-v4 (AVX-512), on a x86-64-v3 ... CPU".
std::string how_it_ended(const PeerOutcome& peer);

}  // namespace fastk::node
