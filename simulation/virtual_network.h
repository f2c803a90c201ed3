// N peers of PeerProtocol in virtual time: a discrete-event loop that executes their
// actions. Compute times and link delays come from a DelaySource, gradients from a
// GradientSource, so the same loop serves the unit tests (toy models, hand-made delays)
// and the simulator (real models, seeded delay models, gradients on worker threads).
// Deterministic: events at equal times run in the order they were scheduled.
//
// With MachineCosts (machine_costs.h), the loop also charges what a real peer's threads
// pay: a gradient is CPU work followed by the injected sleep, and every message, update and
// send is CPU work of the peer's I/O thread, which handles its inputs one at a time; all of
// it runs on the peer's cores, shared with the peers bound to the same cores (CpuPool). The
// protocol sees an input when the I/O thread takes it, and its actions happen when the I/O
// thread has done the work they cost, as in node/peer/. Without costs every step is
// instantaneous and compute times are plain delays.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <variant>
#include <vector>

#include "consensus/actions.h"
#include "consensus/inputs.h"
#include "consensus/peer_protocol.h"
#include "consensus/runtime_sources.h"
#include "simulation/cpu_pool.h"
#include "simulation/machine_costs.h"
#include "simulation/shaped_links.h"

namespace fastk::simulation {

// The protocol's terms, which this library only executes.
using consensus::Action;
using consensus::ActionHandlers;
using consensus::Actions;
using consensus::ArmTimer;
using consensus::AveragingStep;
using consensus::CodedPart;
using consensus::CompressedPart;
using consensus::DelaySource;
using consensus::Finished;
using consensus::GradientResult;
using consensus::IterationCompleted;
using consensus::IterationRecord;
using consensus::NeighbourGone;
using consensus::Params;
using consensus::PeerId;
using consensus::PeerProtocol;
using consensus::SendAveraging;
using consensus::SendCoded;
using consensus::SendCompressed;
using consensus::SendParams;
using consensus::StartGradient;
using consensus::StartValidation;

class GradientSource {
 public:
  virtual ~GradientSource() = default;
  // Called when `peer` starts the gradient(s) of `request` (iteration, parameters, and for
  // coded neighbourhoods the partitions); may start work.
  virtual void begin(PeerId peer, const StartGradient& request) = 0;
  // Called at the virtual time the gradient is done; returns the gradient begun for k.
  virtual GradientResult collect(PeerId peer, std::int64_t k) = 0;
  // A gradient vector the protocol no longer needs (PeerProtocol::release_gradient), for a
  // later gradient to be computed into; a source may keep it or drop it.
  virtual void recycle(std::vector<float> /*gradient*/) {}
  // The losses a StartValidation asks for (consensus/actions.h), computed when it starts
  // (the simulator charges their time through MachineCosts::loss_cpu_s_per_sample).
  virtual std::vector<double> losses(PeerId peer, const StartValidation& request) = 0;
};

class VirtualNetwork {
 public:
  // Peers must have ids 0..n-1 in order. Throws std::invalid_argument for costs that do not
  // fit the peers (a group per peer, non-negative costs).
  VirtualNetwork(std::vector<std::unique_ptr<PeerProtocol>> peers, DelaySource& delays,
                 GradientSource& gradients, MachineCosts costs = {});

  // Called for every finished iteration, in event order.
  std::function<void(const IterationRecord&)> on_record;
  // A real peer says goodbye to its neighbours when it finishes (node/peer/); by default a
  // simulated one does only where the protocol needs it (ad_psgd): a finished peer's last
  // tag stays fresh for its neighbours (docs/protocol.md §6.2). A replay of real peers sets it.
  bool goodbyes_always = false;
  // Churn: a fresh protocol for a peer that comes back (rejoin_at), as a new process of it.
  std::function<std::unique_ptr<PeerProtocol>(PeerId)> make_peer;

  void start(double now_s = 0);
  // Each peer begins at its own time (start_s[i]; a replay of real peers, which a start signal
  // reaches a little apart); messages that reach a peer before then wait in its protocol, as
  // in a real peer's start-up.
  void start_at(const std::vector<double>& start_s);
  // Runs events with time <= until_s. Returns false when no events remain.
  bool run_until(double until_s);
  // Runs until every peer finished or nothing can happen any more.
  void run();
  // Marks `peer` as gone: its pending work is discarded and its neighbours are told.
  void remove_peer(PeerId peer, double now_s);
  // Churn (docs/simulation.md §9). At at_s the peer leaves as a real peer asked to leave does:
  // it says goodbye, and what it was computing or about to handle is dropped (a finished peer
  // has left already). At rejoin_at's time it comes back as a new process (make_peer) that
  // joins from its neighbours' models (PeerProtocol::join); its running neighbours take it
  // back (NeighbourBack) and send it their last model. A peer whose neighbours have all
  // finished or left by then stays away.
  void leave_at(PeerId peer, double at_s);
  void rejoin_at(PeerId peer, double at_s);
  int rejoins() const { return rejoins_; }
  // Ends the run where it is (a stop rule before every peer finished): the peers that have not
  // finished stop (PeerProtocol::stop), and the ad_psgd replies still in flight or waiting for
  // an I/O thread reach them, as they reach a real peer in its goodbye. Updates whose I/O work
  // was under way are reported (on_record). Nothing else happens.
  void stop();

  double now_s() const { return now_s_; }
  // Every peer finished, or left (or was removed) and is away.
  bool away(PeerId peer) const { return removed_[static_cast<std::size_t>(peer)]; }
  bool all_finished() const { return finished_ + away_ == static_cast<int>(peers_.size()); }
  std::int64_t events() const { return events_; }
  std::int64_t messages() const { return messages_; }
  const PeerProtocol& peer(PeerId id) const { return *peers_[static_cast<std::size_t>(id)]; }
  int size() const { return static_cast<int>(peers_.size()); }
  // Time at which the next event fires, or a negative value if none.
  double next_event_s() const { return queue_.empty() ? -1.0 : queue_.top().at_s; }

 private:
  // What an event is: a neighbour's message, a peer's gradient or timer (the three inputs of
  // a peer's I/O thread), the end of a job on an unlimited group of cores, or a wake-up for
  // when the CpuPool's next job may be done (stale when the pool changed since: its sequence
  // is no longer pool_check_).
  struct GradientReady {
    std::int64_t iteration = 0;
    std::uint64_t token = 0;  // the gradient's (start_gradient); a peer that left drops it
  };
  struct ValidationReady {
    std::int64_t iteration = 0;
    std::vector<double> losses;
  };
  struct TimerDue {};
  struct JobDone {
    std::uint64_t job = 0;
  };
  struct PoolCheck {};
  struct Begin {};   // start_at(): the peer's first iteration begins
  struct Leave {};   // leave_at()
  struct Rejoin {};  // rejoin_at()
  struct TakeBack {  // rejoin(): the neighbour hears that `peer` is back (its HELLO)
    PeerId peer = 0;
  };
  using What = std::variant<consensus::Message, GradientReady, ValidationReady, TimerDue, JobDone,
                            PoolCheck, Begin, Leave, Rejoin, TakeBack>;
  struct Event {
    double at_s = 0;
    std::uint64_t sequence = 0;
    PeerId peer = 0;  // the receiver (a message), or whose gradient or timer
    What what;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at_s != b.at_s ? a.at_s > b.at_s : a.sequence > b.sequence;
    }
  };
  // What happens when a job is done: the I/O thread's work for `actions` (then they are
  // carried out), a gradient's CPU work (then its sleep), or a validation's forward passes
  // (then its `losses` reach the peer), the last two on the compute thread.
  enum class JobKind { kIo, kGradient, kValidation };
  struct Job {
    PeerId peer = 0;
    JobKind kind = JobKind::kIo;
    std::int64_t iteration = 0;
    double sleep_s = 0;
    std::uint32_t generation = 0;  // of its peer (a peer that left and came back is a new one)
    std::uint64_t token = 0;       // a gradient's
    Actions actions;
    std::vector<double> losses;
  };
  struct PeerThreads {
    std::deque<Event> inputs;  // waiting for the I/O thread
    bool io_busy = false;
  };
  void schedule(Event event);
  void send(PeerId from, PeerId to, consensus::Message message);
  void say_goodbye(PeerId peer, bool always);
  void execute(PeerId peer, Actions& actions);
  void start_gradient(PeerId peer, const StartGradient& request);
  void start_validation(PeerId peer, const StartValidation& request);
  void dispatch(const Event& event);
  void accept_input(const Event& event);
  void after_finish(const Event& event);
  void drain_inputs(PeerId peer);
  void handle_input(PeerProtocol& peer, const Event& input, Actions& actions);
  double io_cost_s(const Event& input, const Actions& actions) const;
  void run_job(Job job, double work_s);
  void leave(PeerId peer);
  void rejoin(PeerId peer);
  void job_done(std::uint64_t id);
  void check_pool(std::uint64_t sequence);
  void schedule_pool_check();
  int group_of(PeerId peer) const;

  std::vector<std::unique_ptr<PeerProtocol>> peers_;
  std::vector<bool> removed_;
  DelaySource& delays_;
  GradientSource& gradients_;
  MachineCosts costs_;
  CpuPool pool_;
  std::vector<PeerThreads> threads_;
  std::map<std::uint64_t, Job> jobs_;                                // in progress, by job id
  std::map<std::pair<PeerId, PeerId>, double> link_last_arrival_s_;  // per (from, to)
  ShapedLinks links_;
  std::uint64_t next_job_ = 0;
  std::uint64_t pool_check_ = 0;                       // sequence of the live kPoolCheck event
  std::map<CpuPool::JobId, std::uint64_t> pool_jobs_;  // pool job -> job id
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  std::uint64_t sequence_ = 0;
  double now_s_ = 0;
  int finished_ = 0;
  int away_ = 0;                               // removed or left, and not back
  int rejoins_ = 0;                            // peers that came back
  std::vector<std::uint32_t> generation_;      // per peer: how often it came back
  std::vector<bool> left_;                     // per peer: away after leave_at (not remove_peer)
  std::vector<std::uint64_t> gradient_token_;  // per peer: its gradient in progress (0: none)
  std::vector<std::int64_t> gradient_iteration_;
  std::uint64_t next_token_ = 0;
  std::int64_t events_ = 0;
  std::int64_t messages_ = 0;
};

}  // namespace fastk::simulation
