// One real peer (`fastk node`): assembles a peer driver (peer_driver.h, which tells the life
// of a peer) from a config: CPU binding, the trainer and its data, the protocol, the ZeroMQ
// transport to the neighbours, shared-memory model slots, the compute thread and the watcher
// of the launcher's signals.
//
// Injected stragglers: after a gradient, the compute thread sleeps (slowdown - 1) times the
// base gradient time (options.base_gradient_s, from a calibration, else measured at
// start-up), and each message from a neighbour is held back by its link delay before the
// protocol sees it: the same meaning as in `fastk sim` (node/stragglers/delay_spec.h).
//
// Why no Boost.Asio: one zmq poll over the receive socket plus the wake-up eventfd covers
// messages, gradient completions and stop requests, and protocol timers are the poll
// timeout. A second event loop would add the ZMQ_FD edge-trigger pitfalls and nothing else.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "node/config/experiment_config.h"
#include "node/peer/peer_report.h"
#include "node/peer/run_requests.h"

namespace fastk::node::peer {

struct PeerOptions {
  int peer = 0;
  std::uint64_t run_id = 0;          // the config's fingerprint and the launch's nonce: one per run
  bool stop_on_stdin_eof = false;    // set by fastk run: stdin closes when the launcher goes
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
  // Evaluate the final model on the test set (test_accuracy in summary.json); fastk run turns
  // it off and evaluates every peer's model-final.f32 itself, in idle time or after the run,
  // instead of each peer spending its last moments on it while the others wait.
  bool evaluate_final = true;
  // A CURVE key folder (`fastk keys`, or the one `fastk run` made) over [security] keys.
  std::string keys;
  // Checkpoints (checkpoint.h): saved to `checkpoint` every [run] checkpoint_every iterations
  // or checkpoint_every_s seconds; with `resume`, the peer goes on from that file, or, when
  // there is none, joins from its neighbours' models (PeerProtocol::join).
  std::filesystem::path checkpoint;
  bool resume = false;
  std::uint64_t config_fingerprint = 0;        // a checkpoint of another config is refused
  std::optional<IterationStart> began_before;  // resume: when the first process began
};

// Runs the peer to its end. Throws std::runtime_error with a message saying what to fix for
// start-up failures (bind, missing neighbours); after start-up, failures of neighbours are
// reported in PeerReport, not thrown. Blocks SIGINT, SIGTERM, SIGUSR1 and SIGUSR2 for the
// rest of the process and turns them (and a watched stdin) into `requests` (stop_watcher.h).
PeerReport run_peer(const ExperimentConfig& config, const PeerOptions& options,
                    const PeerHooks& hooks, RunRequests& requests);

}  // namespace fastk::node::peer
