// A child process whose stdout and stderr arrive on one non-blocking pipe. Used by the
// launcher to run peers locally (fastk node ...) or remotely (ssh host fastk node ...).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "node/os/unique_fd.h"

namespace fastk::node {

struct ExitStatus {
  int code = 0;    // exit code when exited normally
  int signal = 0;  // terminating signal, 0 if none
  bool ok() const { return signal == 0 && code == 0; }
  std::string describe() const;  // "exit code 1", "killed by SIGKILL"
};

class ChildProcess {
 public:
  // Starts argv[0] (looked up in PATH) with the given argv. stdin is /dev/null so a peer
  // never steals the terminal, or, with `stdin_pipe`, a pipe the launcher holds open: a
  // remote peer behind ssh sees end of file when close_stdin() is called (or the launcher
  // dies) and stops cleanly, which signals cannot achieve through ssh.
  // Throws std::runtime_error if the process cannot start.
  explicit ChildProcess(const std::vector<std::string>& argv, bool stdin_pipe = false);
  ~ChildProcess();  // kills (SIGKILL) and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // File descriptor to poll for output; -1 once the pipe reached end of file.
  int output_fd() const { return fd_.get(); }
  // Reads what is available without blocking and returns the complete lines (without
  // '\n'); a last unterminated line is returned once the pipe closes.
  std::vector<std::string> read_lines();
  // Non-blocking: the exit status once the child has exited (reaped once, then cached).
  std::optional<ExitStatus> poll_exit();
  // Signals the child's process group.
  void send_signal(int signal);
  // Gives up on output still to come (a process the child left behind holds the pipe).
  void stop_reading();
  void close_stdin();
  // Writes `text` to the stdin pipe (no-op without one). False if the child is gone.
  bool write_stdin(const std::string& text);
  // Blocks until the child has exited and its output is read to the end, handing each line
  // to `on_line` (what it prints just before it exits included). While it runs, `interrupt()`
  // is asked every turn (about 20 times a second); the first time it says so, the child gets
  // SIGINT (once).
  ExitStatus wait(
      const std::function<void(const std::string&)>& on_line,
      const std::function<bool()>& interrupt = [] { return false; });

 private:
  pid_t pid_ = -1;
  os::UniqueFd fd_;
  os::UniqueFd stdin_fd_;
  std::string partial_;
  std::optional<ExitStatus> exit_;
};

}  // namespace fastk::node
