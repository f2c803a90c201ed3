#include "node/peer/stop_watcher.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <stdexcept>

namespace fastk::node::peer {
namespace {

// The signals a peer takes as requests: SIGINT/SIGTERM stop, SIGUSR1 finish, SIGUSR2 start.
sigset_t request_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaddset(&set, signal);
  return set;
}

}  // namespace

void block_request_signals() {
  const sigset_t set = request_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopWatcher::StopWatcher(RunRequests& requests, std::function<void()> wake, bool watch_stdin)
    : requests_(requests), wake_(std::move(wake)), watch_stdin_(watch_stdin) {
  const sigset_t set = request_signals();
  signal_fd_.reset(signalfd(-1, &set, SFD_CLOEXEC));
  if (!signal_fd_.valid()) throw std::runtime_error("cannot watch for signals (signalfd)");
  thread_ = std::thread([this] { loop(); });
}

StopWatcher::~StopWatcher() {
  done_ = true;
  thread_.join();
}

void StopWatcher::loop() {
  while (!done_) {
    pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (poll(fds, watch_stdin_ ? 2 : 1, 100) <= 0) continue;  // 100 ms: notice done_
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (read(signal_fd_.get(), &info, sizeof info) == sizeof info)
        request(static_cast<int>(info.ssi_signo));
    }
    if (watch_stdin_ && (fds[1].revents & (POLLIN | POLLHUP))) {
      char byte = 0;
      if (read(STDIN_FILENO, &byte, 1) <= 0) {
        watch_stdin_ = false;  // stdin stays at end of file
        request(SIGTERM);
      } else {
        if (byte == 'l') requests_.leave = true;  // before the stop it comes with
        request(byte == 'f' ? SIGUSR1 : byte == 'g' ? SIGUSR2 : byte == 'l' ? SIGTERM : 0);
      }
    }
  }
}

void StopWatcher::request(int signal) {
  std::atomic<bool>* flag = signal == SIGUSR1                       ? &requests_.finish
                            : signal == SIGUSR2                     ? &requests_.start
                            : signal == SIGINT || signal == SIGTERM ? &requests_.stop
                                                                    : nullptr;
  if (flag && !flag->exchange(true)) wake_();
}

}  // namespace fastk::node::peer
