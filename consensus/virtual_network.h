// N peers of PeerProtocol in virtual time: a discrete-event loop that executes their
// actions. Compute times and link delays come from a DelaySource, gradients from a
// GradientSource, so the same loop serves the unit tests (toy models, hand-made delays)
// and the simulator (real models, seeded delay models, gradients on worker threads).
// Deterministic: events at equal times run in the order they were scheduled.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "consensus/actions.h"
#include "consensus/gradient_stats.h"
#include "consensus/peer_protocol.h"

namespace fastk::consensus {

class DelaySource {
 public:
  virtual ~DelaySource() = default;
  // Duration of peer's gradient at iteration k.
  virtual double compute_time_s(PeerId peer, std::int64_t k) = 0;
  // Travel time of the tag-k message from `from` to `to`.
  virtual double link_delay_s(PeerId from, PeerId to, std::int64_t k) = 0;
};

struct GradientResult {
  std::vector<float> gradient;
  GradientStats stats;
};

class GradientSource {
 public:
  virtual ~GradientSource() = default;
  // Called when `peer` starts the gradient(s) of `request` (iteration, parameters, and for
  // coded neighbourhoods the partitions); may start work.
  virtual void begin(PeerId peer, const StartGradient& request) = 0;
  // Called at the virtual time the gradient is done; returns the gradient begun for k.
  virtual GradientResult collect(PeerId peer, std::int64_t k) = 0;
};

class VirtualNetwork {
 public:
  // Peers must have ids 0..n-1 in order.
  VirtualNetwork(std::vector<std::unique_ptr<PeerProtocol>> peers, DelaySource& delays,
                 GradientSource& gradients);

  // Called for every finished iteration, in event order.
  std::function<void(const IterationRecord&)> on_record;

  void start(double now_s = 0);
  // Runs events with time <= until_s. Returns false when no events remain.
  bool run_until(double until_s);
  // Runs until every peer finished or nothing can happen any more.
  void run();
  // Marks `peer` as gone: its pending work is discarded and its neighbours are told.
  void remove_peer(PeerId peer, double now_s);

  double now_s() const { return now_s_; }
  bool all_finished() const { return finished_ == static_cast<int>(peers_.size()); }
  std::int64_t events() const { return events_; }
  std::int64_t messages() const { return messages_; }
  const PeerProtocol& peer(PeerId id) const { return *peers_[static_cast<std::size_t>(id)]; }
  int size() const { return static_cast<int>(peers_.size()); }
  // Time at which the next event fires, or a negative value if none.
  double next_event_s() const { return queue_.empty() ? -1.0 : queue_.top().at_s; }

 private:
  enum class Kind { kMessage, kGradientDone, kTimer };
  struct Event {
    double at_s = 0;
    std::uint64_t sequence = 0;
    Kind kind = Kind::kMessage;
    PeerId peer = 0;  // receiver
    PeerId from = 0;
    std::int64_t tag = 0;
    Params params;
    CodedPart coded;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at_s != b.at_s ? a.at_s > b.at_s : a.sequence > b.sequence;
    }
  };
  void schedule(Event event);
  void send(PeerId from, PeerId to, std::int64_t tag, const Params& params, CodedPart coded);
  void execute(PeerId peer, Actions& actions);
  void dispatch(const Event& event);

  std::vector<std::unique_ptr<PeerProtocol>> peers_;
  std::vector<bool> removed_;
  DelaySource& delays_;
  GradientSource& gradients_;
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  std::uint64_t sequence_ = 0;
  double now_s_ = 0;
  int finished_ = 0;
  std::int64_t events_ = 0;
  std::int64_t messages_ = 0;
  Actions scratch_;
};

}  // namespace fastk::consensus
