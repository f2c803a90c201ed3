// The [sim] table: how `fastk sim` evaluates and reports (keys and defaults in
// experiments/configs/README.md). The simulated network itself is described by the
// [topology], [consensus] and [stragglers] tables.
#pragma once

namespace fastk::node::sim {

struct SimSettings {
  int threads = 1;                // gradient worker threads (results do not depend on it)
  double eval_interval_s = 10.0;  // virtual seconds between evaluations
  double target_accuracy = 0;     // report the virtual time to reach it (0 = none)
  double target_loss = 0;         // or to get the mean model's test loss below it (0 = none)
  bool stop_at_target = false;    // end the run once the target is reached
  bool per_peer_eval = true;      // also evaluate every peer's own model at each evaluation
};

}  // namespace fastk::node::sim
