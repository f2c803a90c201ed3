// What a peer driver tells at the end of its run, and the hooks through which its caller
// writes the run's files while it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "consensus/actions.h"
#include "learning/model.h"

namespace fastk::node::peer {

struct Departure {
  int peer = 0;
  std::int64_t at_iteration = 0;  // own iteration when it was noticed
  std::string how;                // "bye" or "silent"
};

struct PeerReport {
  int peer = 0;
  std::int64_t iterations = 0;  // completed
  bool finished = false;        // ended by a stop rule (iterations, duration, target)
  bool stopped = false;         // stopped by a signal or stdin end of file
  std::string end;              // "iterations", "duration", "target" or "signal"
  double elapsed_s = 0;         // from the first iteration to the last update
  // The same two moments on the wall clock (Unix time), comparable across hosts as far as
  // their clocks agree: the run's mean-model times count from the latest first iteration.
  double first_iteration_unix_s = 0;
  double last_update_unix_s = 0;
  // The same two moments on the machine's monotonic clock (CLOCK_MONOTONIC, shared by all
  // processes of a host), so that the peers of one host can be put on one time line.
  double first_iteration_monotonic_s = 0;
  double last_update_monotonic_s = 0;
  double startup_s = 0;   // handshake
  double waiting_s = 0;   // sum over iterations of update time - gradient done
  double compute_s = 0;   // gradient computation
  double injected_s = 0;  // injected straggler sleeps
  double base_gradient_s = 0;
  double mean_awaited = 0;  // awaited, used, backups: as in consensus::IterationRecord
  double mean_used = 0;
  double mean_backups = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t sends_refused = 0;         // neighbour's queue full: kept and retried
  std::uint64_t models_superseded = 0;     // refused models replaced by a newer one, never sent
  std::uint64_t bytes_sent = 0;            // over the sockets
  std::uint64_t shared_models_sent = 0;    // SHARED_MODEL messages (models left in shared memory)
  std::uint64_t shared_bytes = 0;          // model bytes those messages offered neighbours
  std::uint64_t shared_models_lapped = 0;  // received ones whose slot was already rewritten
  std::map<std::string, std::uint64_t> rejected;  // bad frames by cause
  std::vector<Departure> departures;
  learning::Evaluation final_eval;  // of the own model on the test set
  std::vector<float> final_model;
};

// Hooks for the caller's metrics files; called on the I/O thread. Record times are seconds
// since the peer's first iteration began.
struct PeerHooks {
  std::function<void(const consensus::IterationRecord&, double loss)> on_iteration;
  // At evaluation instant `instant` (see PeerOptions), the model then and its iteration.
  std::function<void(std::int64_t instant, std::int64_t iteration, std::span<const float> model)>
      on_snapshot;
};
}  // namespace fastk::node::peer
