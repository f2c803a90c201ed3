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
  std::string calibration;  // a `fastk calibrate` file: simulate this machine; empty: none
  double link_rate_mbit =
      0;  // each peer's link, each direction (simulation/shaped_links.h); 0: free
};

}  // namespace fastk::node
