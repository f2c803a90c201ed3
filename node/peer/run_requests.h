// What a peer's launcher (or a signal, or a test) asks of a running peer driver, from another
// thread. Passed to the driver, not a process global, so that one process can run several
// drivers (tests) and each is told apart.
#pragma once

#include <atomic>

namespace fastk::node::peer {

struct RunRequests {
  std::atomic<bool> stop{false};    // SIGINT/SIGTERM, end of a watched stdin: stop now
  std::atomic<bool> finish{false};  // SIGUSR1, 'f': the run reached its target, end cleanly
  std::atomic<bool> start{false};   // SIGUSR2, 'g': every peer is ready, start iterating
  // 'l' ([churn]): leave for a while; stop (so also `stop`), but keep what a comeback needs.
  std::atomic<bool> leave{false};
};

}  // namespace fastk::node::peer
