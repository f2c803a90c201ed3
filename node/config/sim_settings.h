// The [sim] table: how `fastk sim` runs (keys and defaults in
// experiments/configs/README.md). When a run stops and what it reports are [run]'s, the
// simulated network is described by [topology], [consensus] and [stragglers], and the
// machine by a calibration (node/calibration/).
#pragma once

#include <string>

namespace fastk::node {

struct SimSettings {
  int threads = 1;  // gradient worker threads (results do not depend on it)
  // Also evaluate every peer's own model at each evaluation (n test-set passes each time: it
  // made the quickstart's simulation ten times slower). Off, each peer's final model is
  // evaluated once at the end, as a real run does.
  bool per_peer_eval = false;
  // The peers whose files (final model, summary.json) are written and whose final model is
  // evaluated: every peer when the run has at most this many, else this many evenly spaced
  // (peer i * n / peer_files). At 100,000 peers all of them took 4 GB and minutes of test
  // passes; the mean model's figures always cover every peer (and per_peer_eval, when on,
  // still evaluates every peer at every evaluation).
  int peer_files = 2048;
  std::string calibration;  // a `fastk calibrate` file: simulate this machine; empty: none
  double link_rate_mbit =
      0;  // each peer's link, each direction (simulation/shaped_links.h); 0: free
};

}  // namespace fastk::node
