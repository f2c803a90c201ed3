// The event loop of one real peer: it feeds consensus::PeerProtocol what the link, the
// compute thread and the clock bring, and carries out the protocol's actions. Everything it
// talks to is passed in (link, protocol, compute thread, requests), so a test can run N
// drivers on N threads of one process over an InProcessLink, and `fastk node` runs one over
// ZeroMQ (peer_runtime.h assembles it from a config).
//
// Life of a driver (run()):
//  1. Start-up: HELLO until every neighbour has been heard from (rendezvous.h); not hearing
//     from all within startup_timeout_s throws std::runtime_error naming them. With
//     wait_for_start, "@ready" on the progress stream, then wait for requests.start.
//  2. Iterating: messages (held back by injected link delays, delayed_inbox.h), finished
//     gradients and timers go into the protocol; its actions are carried out here: sends
//     through the outbound queue (outbound_queue.h), gradients on the compute thread,
//     timers, finished iterations (hooks), departures (the protocol's NeighbourGone).
//     A HELLO after a neighbour's models comes from a restarted neighbour: it gets the last
//     model again (consensus::NeighbourBack) and its shared memory is mapped afresh.
//     Checkpoints are saved after updates, as parts.checkpoints says (checkpoint.h).
//     ad_psgd's requests and replies go both ways through the protocol like models.
//  3. End: after the last iteration, when duration_s is up, or on requests.finish or
//     requests.stop: BYE to every neighbour, then keep answering until each has left too or
//     was silent for peer_timeout_s, so the final model still reaches peers that are behind.
//     The protocol still takes ad_psgd's messages: requests are declined, late replies added.
// Snapshots: at every evaluation instant (epoch_s + j * eval_interval_s on the wall clock,
// the same instants on every peer) the model goes to hooks.on_snapshot.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <queue>
#include <string>
#include <vector>

#include "consensus/peer_protocol.h"
#include "node/metrics/run_metrics.h"
#include "node/peer/checkpoint.h"
#include "node/peer/compute_thread.h"
#include "node/peer/delayed_inbox.h"
#include "node/peer/inbound.h"
#include "node/peer/outbound_queue.h"
#include "node/peer/peer_report.h"
#include "node/peer/rendezvous.h"
#include "node/peer/run_report.h"
#include "node/peer/run_requests.h"
#include "node/peer/shared_model_reader.h"
#include "node/peer/snapshot_schedule.h"
#include "node/transport/link.h"

namespace fastk::node::peer {

struct DriverSettings {
  int self = 0;
  wire::HelloInfo run;            // what HELLOs carry: the run id and peer count
  std::int64_t iterations = 0;    // for progress lines
  double startup_timeout_s = 30;  // handshake, and the wait for the go
  double peer_timeout_s = 10;     // goodbye: how long a silent neighbour is waited for
  double duration_s = 0;          // time budget of the iterating phase; 0: none
  bool wait_for_start = false;    // "@ready", then wait for requests.start
  // A peer that comes back without a checkpoint: PeerProtocol::join instead of start.
  bool join = false;
  // A peer that comes back: when its first process began (times and the duration budget
  // count from then).
  std::optional<IterationStart> began_before;
  std::ostream* progress = nullptr;  // @ready and @progress lines; null: none
  double progress_interval_s = 0.5;
  double epoch_s = 0;          // Unix time the evaluation instants count from
  double eval_interval_s = 0;  // between snapshots; 0: none
  // Where a neighbour listens, for the start-up error.
  std::function<std::string(int)> endpoint_of = [](int) { return std::string("?"); };
  // The clock the protocol's times count from (the process start, for `fastk node`).
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
};

// What the driver works with; all of it outlives the driver.
struct DriverParts {
  transport::Link& link;
  consensus::PeerProtocol& protocol;
  ComputeThread& compute;
  RunRequests& requests;
  const PeerHooks& hooks;
  stragglers::DelayModel* delays = nullptr;       // injected link delays; null: none
  transport::OwnModelSlots* own_slots = nullptr;  // "shm": where own models are published
  SharedModelReader* shared_models = nullptr;     // "shm": neighbours' models; null: none
  // Saves a checkpoint of x(iteration) (checkpoint.h) when `checkpoints` says one is due;
  // called between an update and the next gradient's start, when the compute thread is idle.
  std::function<void(std::int64_t iteration, std::span<const float> model)> save_checkpoint = {};
  CheckpointSchedule checkpoints{0, 0};
};

class PeerDriver {
 public:
  PeerDriver(DriverSettings settings, DriverParts parts);
  // Runs the peer to its end; see the file comment. The report's final_eval, final_model and
  // base_gradient_s are the caller's to fill.
  PeerReport run();

 private:
  using Clock = std::chrono::steady_clock;
  double now_s() const;
  std::string startup_failure() const;
  bool handshake();
  bool wait_for_start();
  void iterate();
  void step(int wait_ms);
  void receive(std::chrono::milliseconds timeout);
  void dispatch(transport::ReceivedMessage message);
  void hand_to_protocol(consensus::Message message);
  void note_arrival(const consensus::Message& message, double now);
  void execute(const consensus::Actions& actions);
  void send_model(const consensus::SendParams& s);
  void send_coded(const consensus::SendCoded& s);
  void send_compressed(const consensus::SendCompressed& s);
  void send_averaging(const consensus::SendAveraging& s);
  void averaging_in_goodbye(const consensus::Message& message);
  void completed(const consensus::IterationRecord& r);
  void departed(const consensus::NeighbourGone& gone);
  void checkpoint_if_due();
  int next_wait_ms() const;
  bool out_of_time() const;
  void take_due_snapshot();
  void print_progress(bool force);
  void end_of_iterating();
  void say_goodbye();

  DriverSettings settings_;
  DriverParts parts_;
  Rendezvous rendezvous_;
  OutboundQueue outbound_;
  DelayedInbox inbox_;
  SnapshotSchedule snapshots_;
  std::unique_ptr<SharedModelReader> no_shared_models_;  // when parts_ has none
  SharedModelReader* shared_models_ = nullptr;
  std::priority_queue<double, std::vector<double>, std::greater<>> timers_;
  // Arrivals during the start-up (protocol clock), told once the files' clock is known.
  struct EarlyArrival {
    int from;
    std::int64_t tag;
    double at_s;
    bool bye;
  };
  std::vector<EarlyArrival> early_arrivals_;
  RunReport report_;
  double began_s_ = 0;
  double budget_from_s_ = 0;  // duration_s counts from here (an earlier process's start)
  double next_progress_s_ = 0;
  std::int64_t printed_iterations_ = -1;
  // The protocol gets input (and its actions run) from the start-up on, not in the goodbye.
  enum class Phase { kStartingUp, kIterating, kGoodbye };
  Phase phase_ = Phase::kStartingUp;
};

}  // namespace fastk::node::peer
