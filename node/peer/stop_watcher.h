// Turns the launcher's requests into RunRequests for a `fastk node` process: SIGINT/SIGTERM
// (and, if asked, end of file on stdin) into stop, SIGUSR1 (or an 'f' on a watched stdin)
// into finish, SIGUSR2 (or a 'g') into start, an 'l' into leave and stop ([churn]: the peer
// will be started again), each followed by `wake` so the I/O loop sees it
// at once. The signals are blocked in every thread (block_request_signals) and read here from
// a signalfd polled beside stdin: a signal handler may not touch ZeroMQ.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "node/os/unique_fd.h"
#include "node/peer/run_requests.h"

namespace fastk::node::peer {

// Blocks the request signals in the calling thread and every thread it starts, for the rest
// of the process: StopWatcher reads them, and a late one (SIGUSR1 to a peer that is already
// writing its outputs) must not kill the process with its default action. Call it before any
// thread exists (ZeroMQ's included).
void block_request_signals();

class StopWatcher {
 public:
  // Throws std::runtime_error when the signals cannot be watched.
  StopWatcher(RunRequests& requests, std::function<void()> wake, bool watch_stdin);
  ~StopWatcher();
  StopWatcher(const StopWatcher&) = delete;
  StopWatcher& operator=(const StopWatcher&) = delete;

 private:
  void loop();
  void request(int signal);

  RunRequests& requests_;
  std::function<void()> wake_;
  bool watch_stdin_;
  os::UniqueFd signal_fd_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace fastk::node::peer
