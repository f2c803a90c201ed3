// One real peer (`fastk node`): drives consensus::PeerProtocol with a ZeroMQ transport on an
// I/O thread and a compute thread for gradients.
//
// Life of a peer:
//  1. Start-up: bind, connect to every neighbour, send HELLO every 200 ms until every
//     neighbour has been heard from (HELLO or HELLO_ACK); answer every HELLO with HELLO_ACK
//     for the whole run. A neighbour of another run (run id or peer count differ) is rejected
//     by the decoder. Not hearing from all within startup_timeout_ms is an error naming them.
//  2. Iterating: messages, finished gradients and timers go into the protocol; its actions
//     (send, start gradient, arm timer, iteration completed, finished) are carried out here.
//  3. End: after the last iteration, when run.duration_s is up, when the launcher says the
//     run is done (SIGUSR1, or an 'f' on stdin when asked to watch it: the target was
//     reached), or on SIGINT/SIGTERM (or end of file on stdin), send BYE to every neighbour,
//     then keep the sockets open until every neighbour has left or peer_timeout_ms passed,
//     so the final model still reaches the peers that are behind.
// Injected stragglers: after a gradient, the compute thread sleeps (slowdown - 1) times the
// base gradient time (options.base_gradient_s, from a calibration, else measured at
// start-up), and each message from a neighbour is held back by its link delay before the
// protocol sees it: the same meaning as in `fastk sim` (node/stragglers/delay_spec.h).
// Snapshots: at every evaluation instant (epoch_s + j * eval_interval_s on the wall clock,
// the same instants on every peer) the model goes to hooks.on_snapshot, for the run's
// mean-model evaluation over time.
// A neighbour that sends BYE, or is silent for peer_timeout_ms, stops being awaited (the
// protocol's departure and silence rules); the report lists such departures.
//
// Why no Boost.Asio: one zmq poll over the receive socket plus the waker's eventfd covers
// messages, gradient completions and stop requests, and protocol timers are the poll
// timeout. A second event loop would add the ZMQ_FD edge-trigger pitfalls and nothing else.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "consensus/actions.h"
#include "learning/model.h"
#include "node/config/experiment_config.h"
#include "node/launch/progress.h"
#include "node/wire/decoder.h"

namespace fastk::node::peer {

struct PeerOptions {
  int peer = 0;
  std::uint64_t run_id = 0;          // fingerprint of the config, the same on every peer
  bool stop_on_stdin_eof = false;    // set by the launcher for peers started through ssh
  double progress_interval_s = 0.5;  // @progress lines on stdout
  double base_gradient_s = 0;        // what slowdowns multiply; 0: measure at start-up
  // The parameter count the base gradient was measured for (a calibration's); 0: unchecked.
  std::size_t base_gradient_parameters = 0;
  double epoch_s = 0;          // Unix time the evaluation instants count from
  double eval_interval_s = 0;  // between snapshots; 0: only the final model
  // After the handshake, print "@ready" and wait for the launcher's go (SIGUSR2, or a 'g' on
  // a watched stdin) before the first iteration, so that every peer of the run starts
  // together, not each as soon as its own neighbours are up (fastk run sets it).
  bool wait_for_start = false;
};

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

// Runs the peer to its end. Throws std::runtime_error with a message saying what to fix for
// start-up failures (bind, missing neighbours); after start-up, failures of neighbours are
// reported in PeerReport, not thrown.
PeerReport run_peer(const ExperimentConfig& config, const PeerOptions& options,
                    const PeerHooks& hooks);

// Set by the SIGINT/SIGTERM handler that run_peer installs; exposed for tests.
std::atomic<bool>& stop_requested();
// Set by SIGUSR1 (or an 'f' on a watched stdin): the run is done, end cleanly.
std::atomic<bool>& finish_requested();
// Set by SIGUSR2 (or a 'g' on a watched stdin): every peer is ready, start iterating.
std::atomic<bool>& start_requested();

}  // namespace fastk::node::peer
