#include "node/launch/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

extern char** environ;

namespace fastk::node {

ExitStatus ChildProcess::wait(const std::function<void(const std::string&)>& on_line,
                              const std::function<bool()>& interrupt) {
  bool interrupted = false;
  std::optional<double> exited_for_s;
  while (output_fd() >= 0 || !poll_exit()) {
    if (output_fd() >= 0) {
      pollfd fd{output_fd(), POLLIN, 0};
      ::poll(&fd, 1, 50);
    } else {
      ::poll(nullptr, 0, 20);
    }
    for (const auto& line : read_lines()) on_line(line);
    // Asked every turn, so that a caller can act on later requests too (a second Ctrl-C).
    if (interrupt() && !interrupted) {
      interrupted = true;
      send_signal(SIGINT);
    }
    // Something the child left behind may hold the pipe open: stop reading a second after.
    if (poll_exit() && output_fd() >= 0) {
      exited_for_s = exited_for_s.value_or(0) + 0.05;
      if (*exited_for_s > 1.0) stop_reading();
    }
  }
  return *poll_exit();
}

std::string ExitStatus::describe() const {
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return std::string("killed by SIG") + (name ? name : std::to_string(signal).c_str());
  }
  return "exit code " + std::to_string(code);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, bool stdin_pipe) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess needs a command");
  os::UniqueFd output_read, output_write, input_read, input_write;
  auto make_pipe = [](os::UniqueFd& read_end, os::UniqueFd& write_end) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("cannot create a pipe: ") + strerror(errno));
    }
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  };
  make_pipe(output_read, output_write);
  if (stdin_pipe) make_pipe(input_read, input_write);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_pipe) {
    posix_spawn_file_actions_adddup2(&actions, input_read.get(), STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, output_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_write.get(), STDERR_FILENO);
  // The child gets default signal dispositions, so a launcher ignoring SIGINT does not
  // make its peers immune; it gets its own process group so a terminal Ctrl-C reaches
  // the launcher only, which then stops the peers in order.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  // The child's ends close here: the child holds its own copies.
  if (rc != 0) throw std::runtime_error("cannot start '" + argv[0] + "': " + strerror(rc));
  stdin_fd_ = std::move(input_write);
  fd_ = std::move(output_read);
  fcntl(fd_.get(), F_SETFL, fcntl(fd_.get(), F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  fd_.reset();
  close_stdin();
  if (!exit_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::vector<std::string> ChildProcess::read_lines() {
  std::vector<std::string> lines;
  if (!fd_.valid()) return lines;
  char buffer[65536];
  while (true) {
    ssize_t n = read(fd_.get(), buffer, sizeof buffer);
    if (n > 0) {
      partial_.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) fd_.reset();  // end of file, error
    break;
  }
  std::size_t start = 0;
  for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(partial_.substr(start, end - start));
  }
  partial_.erase(0, start);
  if (!fd_.valid() && !partial_.empty()) lines.push_back(std::move(partial_)), partial_.clear();
  return lines;
}

std::optional<ExitStatus> ChildProcess::poll_exit() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    ExitStatus s;
    if (WIFEXITED(status)) s.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
    exit_ = s;
  }
  return exit_;
}

bool ChildProcess::write_stdin(const std::string& text) {
  if (!stdin_fd_.valid()) return false;
  const ssize_t written = write(stdin_fd_.get(), text.data(), text.size());
  return written == static_cast<ssize_t>(text.size());
}

void ChildProcess::close_stdin() { stdin_fd_.reset(); }

void ChildProcess::send_signal(int signal) {
  // The child leads its own process group: signal the group so helpers it started go too.
  if (!exit_ && pid_ > 0) kill(-pid_, signal);
}

void ChildProcess::stop_reading() { fd_.reset(); }

}  // namespace fastk::node
