#include "node/peer/peer_runtime.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <queue>
#include <set>
#include <thread>

#include "consensus/peer_protocol.h"
#include "node/config/cluster.h"
#include "node/config/protocol_config.h"
#include "node/launch/wall_clock.h"
#include "node/metrics/run_metrics.h"
#include "node/os/cpu_binding.h"
#include "node/os/unique_fd.h"
#include "node/peer/compute_thread.h"
#include "node/peer/peer_id.h"
#include "node/stragglers/delay_model.h"
#include "node/training/peer_trainer.h"
#include "node/transport/shared_models.h"
#include "node/transport/zmq_transport.h"
#include "node/wire/coded_payload.h"
#include "node/wire/encoder.h"
#include "node/wire/model_slot_payload.h"
#include "topology/topology.h"

namespace fastk::node::peer {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kHelloEvery_s = 0.2;
constexpr int kBaseGradientRepeats = 20;  // gradients timed at start-up without a calibration

// A received MODEL frame as protocol parameters, read in place (no copy).
class FrameParams final : public consensus::ParamBuffer {
 public:
  explicit FrameParams(transport::ReceivedMessage message) : message_(std::move(message)) {}
  std::span<const float> values() const override { return message_.parameters(); }

 private:
  transport::ReceivedMessage message_;
};

// A received CODED_GRADIENT as the protocol's coded part.
consensus::CodedPart coded_part(wire::CodedPayload payload) {
  auto coded = std::make_shared<consensus::CodedGradient>();
  coded->covers.assign(payload.covers.begin(), payload.covers.end());
  coded->role.assign(payload.role.begin(), payload.role.end());
  coded->compute_s = payload.compute_s;
  coded->gradient = consensus::make_params(std::move(payload.gradient));
  return coded;
}

// The signals a peer takes as requests: SIGINT/SIGTERM stop, SIGUSR1 finish, SIGUSR2 start.
sigset_t request_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaddset(&set, signal);
  return set;
}

// Turns SIGINT/SIGTERM (and, if asked, end of file on stdin) into a stop request, SIGUSR1
// (or an 'f' on a watched stdin) into a finish request and SIGUSR2 (or a 'g') into the start,
// each waking the I/O loop. The signals are blocked in every thread and read here from a
// signalfd polled beside stdin, so a request on either arrives at once; a signal handler
// may not touch ZeroMQ.
class StopWatcher {
 public:
  StopWatcher(transport::Waker waker, bool watch_stdin)
      : waker_(std::move(waker)), watch_stdin_(watch_stdin) {
    const sigset_t set = request_signals();
    signal_fd_.reset(signalfd(-1, &set, SFD_CLOEXEC));
    if (!signal_fd_.valid()) throw std::runtime_error("cannot watch for signals (signalfd)");
    thread_ = std::thread([this] { loop(); });
  }
  ~StopWatcher() {
    done_ = true;
    thread_.join();
  }

 private:
  void loop() {
    while (!done_) {
      pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
      if (poll(fds, watch_stdin_ ? 2 : 1, 100) <= 0) continue;  // 100 ms: notice done_
      if (fds[0].revents & POLLIN) {
        signalfd_siginfo info{};
        if (read(signal_fd_.get(), &info, sizeof info) == sizeof info)
          request(static_cast<int>(info.ssi_signo));
      }
      if (watch_stdin_ && (fds[1].revents & (POLLIN | POLLHUP))) {
        char byte = 0;
        if (read(STDIN_FILENO, &byte, 1) <= 0) {
          watch_stdin_ = false;  // stdin stays at end of file
          request(SIGTERM);
        } else {
          request(byte == 'f' ? SIGUSR1 : byte == 'g' ? SIGUSR2 : 0);
        }
      }
    }
  }

  void request(int signal) {
    std::atomic<bool>* flag = signal == SIGUSR1                       ? &finish_requested()
                              : signal == SIGUSR2                     ? &start_requested()
                              : signal == SIGINT || signal == SIGTERM ? &stop_requested()
                                                                      : nullptr;
    if (flag && !flag->exchange(true)) waker_.wake();
  }

  transport::Waker waker_;
  bool watch_stdin_;
  os::UniqueFd signal_fd_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Blocks the request signals in the calling thread and every thread it starts, for the
// rest of the process: StopWatcher reads them, and a late one (SIGUSR1 to a peer that is
// already writing its outputs) must not kill the process with its default action.
void block_request_signals() {
  const sigset_t set = request_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

class Peer {
 public:
  Peer(const ExperimentConfig& config, const PeerOptions& options, const PeerHooks& hooks)
      : config_(config),
        options_(options),
        hooks_(hooks),
        topology_(topology::build_topology(config.topology)),
        start_(Clock::now()) {
    const int n = topology_.graph.size();
    if (options.peer < 0 || options.peer >= n) {
      throw std::runtime_error("peer id " + std::to_string(options.peer) + " is not in 0.." +
                               std::to_string(n - 1));
    }
    // Before any thread starts (ZeroMQ's I/O thread, the compute thread), so that all of
    // them inherit the binding; the data are loaded on the bound CPUs too.
    if (config.cluster.bind_cpus) bind_cpus(n);
    const consensus::ProtocolConfig protocol = protocol_config(
        config.consensus, config.run, config.optimizer, config.cluster, PeerRuntime::kReal);
    std::vector<int> stored;  // coded neighbourhoods: the partitions this peer holds
    if (protocol.coding.scheme != coding::Scheme::kNone) {
      stored = training::coded_placement(topology_.graph, protocol.coding)
                   .stored[static_cast<std::size_t>(options.peer)];
    }
    trainer_ = std::make_unique<training::PeerTrainer>(config.data, config.model, config.optimizer,
                                                       n, options.peer, stored);
    if (options.base_gradient_parameters != 0 &&
        options.base_gradient_parameters != trainer_->num_parameters()) {
      throw std::invalid_argument(
          "the calibration was measured for a model of " +
          std::to_string(options.base_gradient_parameters) + " parameters; this config's has " +
          std::to_string(trainer_->num_parameters()) + " (run `fastk calibrate` on this config)");
    }
    report_.base_gradient_s =
        options.base_gradient_s > 0 ? options.base_gradient_s : measure_base_gradient_s();
    protocol_ = std::make_unique<consensus::PeerProtocol>(
        options.peer, topology_.schedule, protocol, consensus::make_params(trainer_->initial()));
    neighbours_ = protocol_->known_neighbours();
    delays_ = std::make_unique<stragglers::DelayModel>(config.stragglers, n);

    wire::HelloInfo run{options.run_id, static_cast<std::uint32_t>(n)};
    PeerEndpoints own = peer_endpoints(config.cluster, n, options.peer);
    transport_ = std::make_unique<transport::ZmqTransport>(
        wire::WirePeers(static_cast<wire::PeerId>(options.peer), run,
                        std::vector<wire::PeerId>(neighbours_.begin(), neighbours_.end())),
        own.bind);
    for (int j : neighbours_) {
      const PeerEndpoints theirs = peer_endpoints(config.cluster, n, j);
      transport_->connect(static_cast<wire::PeerId>(j), theirs.connect);
      shared_model_names_[j] = theirs.shared_models;
      last_heard_s_[j] = 0;
    }
    if (!own.shared_models.empty()) share_models(own.shared_models);
    compute_ = std::make_unique<ComputeThread>(
        [this](const consensus::StartGradient& request, std::vector<float> buffer) {
          return trainer_->gradient(request, std::move(buffer));
        },
        [this](std::int64_t k, double work) {
          // A coded peer computing `work` gradients straggles on each, as in `fastk sim`.
          return work * delays_->injected_sleep_s(options_.peer, k, report_.base_gradient_s);
        },
        transport_->make_waker());
    stop_watcher_ =
        std::make_unique<StopWatcher>(transport_->make_waker(), options.stop_on_stdin_eof);
  }

  // Without a calibrated base (a peer started by hand or by mpirun), the peer times its own
  // gradient before the handshake; peers starting at once on shared cores inflate it.
  double measure_base_gradient_s() {
    const double base = trainer_->time_gradient_s(kBaseGradientRepeats);
    std::cerr << "peer " << options_.peer << ": base gradient time " << 1000 * base
              << " ms, measured at start-up (`fastk run` passes a calibrated one; "
                 "docs/simulation.md)"
              << std::endl;
    return base;
  }

  // [cluster] bind_cpus: this peer's block of the host's CPUs (cpu_binding.h). A process
  // started by mpirun or srun keeps the CPUs its launcher chose: that is the launcher's job,
  // and narrowing a per-rank mask by the host-wide index would leave CPUs idle.
  void bind_cpus(int peers) {
    const std::string who = "peer " + std::to_string(options_.peer) + ": ";
    for (const char* rank : kRankVariables) {
      if (std::getenv(rank)) {
        std::cerr << who << "kept the CPUs its launcher gave it (" << rank
                  << " is set; [cluster] bind_cpus)" << std::endl;
        return;
      }
    }
    const HostShare share = host_share(config_.cluster, peers, options_.peer);
    try {
      const auto cpus = os::bind_to_cpu_share(share.local_index, share.local_count);
      std::cerr << who << "bound to CPU " << os::describe_cpus(cpus) << " (peer "
                << share.local_index + 1 << " of " << share.local_count
                << " on this host; [cluster] bind_cpus)" << std::endl;
    } catch (const std::runtime_error& e) {
      std::cerr << who << "not bound to CPUs: " << e.what() << std::endl;
    }
  }

  // local_transport = "shm": the protocol writes its models into slots neighbours read in
  // place (node/transport/shared_models.h). Created after binding the socket, whose
  // endpoint the name is derived from, so no live peer owns the name.
  void share_models(const std::string& name) {
    const std::size_t floats = protocol_->model()->values().size();
    neighbour_models_ =
        std::make_unique<transport::NeighbourModels>(options_.run_id, options_.peer, floats);
    const std::vector<wire::PeerId> readers(neighbours_.begin(), neighbours_.end());
    try {
      own_slots_ = std::make_unique<transport::OwnModelSlots>(
          name, options_.run_id, static_cast<wire::PeerId>(options_.peer), readers, floats,
          transport::shared_model_slots(readers.size()));
    } catch (const std::runtime_error& e) {
      std::cerr << "peer " << options_.peer << ": " << e.what()
                << "; sending models over the socket instead" << std::endl;
      return;
    }
    protocol_->set_buffer_source([this] { return own_slots_->acquire(); });
  }

  // The model a SHARED_MODEL names, held in the sender's shared memory; null when it was
  // rewritten already (a newer one is on its way) or the reference is bad (counted, and
  // logged once per sender).
  consensus::Params shared_model(int from, std::span<const std::byte> payload) {
    const wire::ModelSlotRef ref = wire::read_model_slot(payload);
    transport::NeighbourModels::Taken taken;
    const auto name = shared_model_names_.find(from);
    if (name == shared_model_names_.end()) {
      taken.problem = "peer " + std::to_string(from) + " is not a neighbour";
    } else if (neighbour_models_) {
      taken = neighbour_models_->take(static_cast<wire::PeerId>(from), name->second, ref);
    } else {
      taken.problem = "this peer does not use shared memory ([cluster] local_transport)";
    }
    if (taken.outcome == transport::NeighbourModels::Outcome::kLapped) {
      ++report_.shared_models_lapped;
    } else if (taken.outcome == transport::NeighbourModels::Outcome::kInvalid) {
      ++report_.rejected["bad shared model"];
      if (bad_shared_logged_.insert(from).second) {
        std::cerr << "peer " << options_.peer << ": dropped a SHARED_MODEL from peer " << from
                  << ": " << taken.problem << std::endl;
      }
    }
    return taken.params;
  }

  PeerReport run() {
    report_.peer = options_.peer;
    if (!handshake() || !wait_for_start()) return finish_report();
    const double began_s = now_s();
    report_.startup_s = began_s;
    report_.first_iteration_unix_s = unix_now_s();
    began_s_ = began_s;
    // The model at the instant the peer starts in is the initial one: saved, so that the mean
    // model of every later instant is known even when the peers start in different instants.
    next_instant_ = instant_at(report_.first_iteration_unix_s);
    started_ = true;
    take_due_snapshot();
    // Silence counts from the start: neighbours send nothing while all wait for the go.
    for (auto& [neighbour, heard_s] : last_heard_s_) heard_s = std::max(heard_s, began_s);
    consensus::Actions actions;
    protocol_->start(began_s, actions);
    execute(actions);
    while (!protocol_->finished() && !stop_requested() && !finish_requested() && !out_of_time()) {
      step(next_wait_ms());
      take_due_snapshot();
      note_silent_neighbours();
      print_progress(false);
    }
    // From here on the protocol gets nothing: a peer that stopped before its last iteration
    // (time budget, target, signal) would otherwise go on iterating on the models still
    // arriving during the goodbye, sending models after its BYE, which brings it back into
    // its neighbours' awaited sets just before it goes for good.
    iterating_ = false;
    report_.finished = !stop_requested() || protocol_->finished();
    report_.stopped = !report_.finished;
    report_.end = protocol_->finished() ? "iterations"
                  : out_of_time()       ? "duration"
                  : finish_requested()  ? "target"
                                        : "signal";
    report_.elapsed_s = last_update_s_ - began_s;
    const double origin_s = std::chrono::duration<double>(start_.time_since_epoch()).count();
    report_.first_iteration_monotonic_s = origin_s + began_s;
    report_.last_update_monotonic_s = origin_s + last_update_s_;
    report_.last_update_unix_s = report_.first_iteration_unix_s + (last_update_s_ - began_s);
    print_progress(true);
    say_goodbye();
    return finish_report();
  }

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Sends HELLO until every neighbour has been heard from. False if stopped meanwhile.
  bool handshake() {
    const double deadline_s = static_cast<double>(config_.cluster.startup_timeout_ms) / 1000.0;
    double next_hello_s = 0;
    while (heard_.size() < neighbours_.size()) {
      if (stop_requested()) return false;
      const double now = now_s();
      if (now >= deadline_s) throw std::runtime_error(missing_neighbours_message());
      if (now >= next_hello_s) {
        for (int j : neighbours_) {
          if (!heard_.count(j)) send(j, hello(wire::MessageType::kHello));
        }
        next_hello_s = now + kHelloEvery_s;
      }
      receive(std::chrono::milliseconds(
          static_cast<int>(1000 * std::max(0.0, std::min(next_hello_s, deadline_s) - now)) + 1));
    }
    return true;
  }

  // With options.wait_for_start: "@ready" for the launcher, then answer HELLOs until it
  // says go. False if stopped meanwhile; throws after startup_timeout_ms without a go.
  bool wait_for_start() {
    if (!options_.wait_for_start) return true;
    std::cout << kReadyLine << std::endl;
    const double deadline_s =
        now_s() + static_cast<double>(config_.cluster.startup_timeout_ms) / 1000.0;
    while (!start_requested()) {
      if (stop_requested()) return false;
      if (now_s() >= deadline_s) {
        throw std::runtime_error("peer " + std::to_string(options_.peer) +
                                 " was ready but not told to start within startup_timeout_ms = " +
                                 std::to_string(config_.cluster.startup_timeout_ms) +
                                 " (did another peer fail to start? see its log)");
      }
      flush_pending();
      receive(std::chrono::milliseconds(50));
    }
    return true;
  }

  std::string missing_neighbours_message() const {
    std::string missing;
    const int n = topology_.graph.size();
    for (int j : neighbours_) {
      if (heard_.count(j)) continue;
      missing +=
          "\n  peer " + std::to_string(j) + " at " + peer_endpoints(config_.cluster, n, j).connect;
    }
    return "peer " + std::to_string(options_.peer) + " did not hear from " +
           std::to_string(neighbours_.size() - heard_.size()) + " neighbour(s) within " +
           "startup_timeout_ms = " + std::to_string(config_.cluster.startup_timeout_ms) +
           " (are they running, with the same config?):" + missing;
  }

  wire::EncodedMessage hello(wire::MessageType type) const {
    return wire::encode_hello(
        type, static_cast<wire::PeerId>(options_.peer), protocol_->iteration(),
        {options_.run_id, static_cast<std::uint32_t>(topology_.graph.size())});
  }

  // A send the neighbour's full queue refuses is kept and retried every loop turn (newest
  // wins: a newer model or coded gradient replaces an older one of its type still pending,
  // as it would in the receiver's mailbox), so the newest ones and a BYE are never lost, and
  // a peer running ahead of a stuck neighbour keeps at most one of each queued. Dropping
  // them silently can leave a neighbour waiting for a tag that never comes, until the
  // silence timeout.
  void send(int to, const wire::EncodedMessage& message) {
    auto& queue = pending_[to];
    if (queue.empty() && transport_->send(static_cast<wire::PeerId>(to), message) ==
                             transport::SendStatus::kQueued) {
      return;
    }
    // A model replaces a model, whichever way it travels; a coded gradient a coded gradient.
    const auto kind = [](const wire::EncodedMessage& m) {
      switch (static_cast<wire::MessageType>(m.header[wire::kTypeOffset])) {
        case wire::MessageType::kModel:
        case wire::MessageType::kSharedModel:
          return 1;
        case wire::MessageType::kCodedGradient:
          return 2;
        default:
          return 0;
      }
    };
    if (kind(message) != 0) {
      const auto older = std::find_if(queue.begin(), queue.end(),
                                      [&](const auto& m) { return kind(m) == kind(message); });
      if (older != queue.end()) {
        queue.erase(older);
        ++report_.models_superseded;
      }
    }
    queue.push_back(message);
  }

  void flush_pending() {
    for (auto& [to, queue] : pending_) {
      while (!queue.empty() && transport_->send(static_cast<wire::PeerId>(to), queue.front()) ==
                                   transport::SendStatus::kQueued) {
        queue.pop_front();
      }
    }
  }

  bool sends_pending() const {
    for (const auto& [to, queue] : pending_)
      if (!queue.empty()) return true;
    return false;
  }

  // Milliseconds until the next protocol timer, held message, snapshot, the end of the time
  // budget or progress line (at most 1 s).
  int next_wait_ms() {
    double wait = 1.0;
    if (!timers_.empty()) wait = std::min(wait, timers_.top() - now_s());
    if (!held_.empty()) wait = std::min(wait, held_.top().release_s - now_s());
    wait = std::min(wait, next_progress_s_ - now_s());
    if (options_.eval_interval_s > 0) {
      wait = std::min(wait, instant_time(next_instant_) - unix_now_s());
    }
    if (config_.run.duration_s > 0) {
      wait = std::min(wait, began_s_ + config_.run.duration_s - now_s());
    }
    return std::max(0, static_cast<int>(std::ceil(wait * 1000)));
  }

  bool out_of_time() const {
    return config_.run.duration_s > 0 && now_s() - began_s_ >= config_.run.duration_s;
  }

  // Evaluation instants: epoch_s + j * eval_interval_s.
  std::int64_t instant_at(double unix_s) const {
    if (options_.eval_interval_s <= 0) return 0;
    return static_cast<std::int64_t>(
        std::floor((unix_s - options_.epoch_s) / options_.eval_interval_s));
  }
  double instant_time(std::int64_t instant) const {
    return options_.epoch_s + static_cast<double>(instant) * options_.eval_interval_s;
  }

  // The model at the latest instant passed, if not taken yet (a loop turn late by more than
  // an interval skips the instants in between: they are missing for this peer).
  void take_due_snapshot() {
    // Only while iterating: before, the model is the initial one (saved at the start); after,
    // the final model stands for every later instant.
    if (options_.eval_interval_s <= 0 || !started_ || !iterating_) return;
    const std::int64_t now = instant_at(unix_now_s());
    if (now < next_instant_) return;
    if (hooks_.on_snapshot) {
      hooks_.on_snapshot(now, protocol_->iteration(), protocol_->model()->values());
    }
    next_instant_ = now + 1;
  }

  void step(int wait_ms) {
    flush_pending();
    receive(std::chrono::milliseconds(sends_pending() ? std::min(wait_ms, 1) : wait_ms));
    release_held_messages();
    consensus::Actions actions;
    if (auto done = compute_->poll()) {
      report_.compute_s += done->compute_s;
      report_.injected_s += done->injected_s;
      last_loss_ = done->step.loss;
      compute_->recycle(protocol_->hand_over_gradient(
          now_s(), std::move(done->step.result.gradient), done->step.result.stats, actions));
    }
    bool due = false;
    while (!timers_.empty() && timers_.top() <= now_s()) {
      timers_.pop();
      due = true;
    }
    if (due) protocol_->on_timer(now_s(), actions);
    execute(actions);
  }

  // Takes at most one message (more wait in ZeroMQ's queue for the next call).
  void receive(std::chrono::milliseconds timeout) {
    auto got = transport_->receive(timeout);
    take_due_snapshot();  // an instant passed while waiting: the model before this message
    if (!got || !std::holds_alternative<transport::ReceivedMessage>(*got)) return;
    auto& message = std::get<transport::ReceivedMessage>(*got);
    const int from = static_cast<int>(message.sender());
    const double now = now_s();
    last_heard_s_[from] = now;
    heard_.insert(from);
    consensus::Actions actions;
    switch (message.type()) {
      case wire::MessageType::kHello:
        send(from, hello(wire::MessageType::kHelloAck));
        break;
      case wire::MessageType::kHelloAck:
        break;
      case wire::MessageType::kModel: {
        const std::int64_t tag = message.iteration();
        deliver({now, 0, from, tag, std::make_shared<const FrameParams>(std::move(message)), {}});
        break;
      }
      case wire::MessageType::kSharedModel:
        if (auto params = shared_model(from, message.payload())) {
          deliver({now, 0, from, message.iteration(), std::move(params), {}});
        }
        break;
      case wire::MessageType::kCodedGradient:
        deliver({now, 0, from, message.iteration(), nullptr,
                 coded_part(wire::read_coded_payload(message.payload()))});
        break;
      case wire::MessageType::kBye:
        left_.insert(from);
        report_.departures.push_back({from, protocol_->iteration(), "bye"});
        // Behind the models it sent before (a held-back link keeps its order).
        deliver({now, 0, from, message.iteration(), nullptr, nullptr, true});
        break;
    }
    execute(actions);
  }

  // A model or coded gradient for the protocol, held back by its injected link delay.
  struct Held {
    double release_s = 0;
    std::uint64_t sequence = 0;
    int from = 0;
    std::int64_t tag = 0;
    consensus::Params params;
    consensus::CodedPart coded;
    bool bye = false;  // the neighbour left
    bool operator>(const Held& other) const {
      return release_s != other.release_s ? release_s > other.release_s : sequence > other.sequence;
    }
  };

  void deliver(Held message) {
    if (!iterating_) return;
    if (delays_->delays_links()) {
      // A BYE follows the sender's last held model, whatever its own delay would be.
      auto& last = last_release_s_[message.from];
      message.release_s =
          message.bye
              ? std::max(message.release_s, last)
              : message.release_s + delays_->link_delay_s(message.from, options_.peer, message.tag);
      last = std::max(last, message.release_s);
      message.sequence = held_sequence_++;
      held_.push(std::move(message));
      return;
    }
    hand_to_protocol(message);
  }

  void release_held_messages() {
    while (iterating_ && !held_.empty() && held_.top().release_s <= now_s()) {
      Held message = held_.top();
      held_.pop();
      hand_to_protocol(message);
    }
  }

  void hand_to_protocol(const Held& message) {
    consensus::Actions actions;
    if (message.bye) {
      protocol_->on_neighbour_left(now_s(), message.from, actions);
    } else if (message.coded) {
      protocol_->on_coded_gradient(now_s(), message.from, message.tag, message.coded, actions);
    } else {
      protocol_->on_message(now_s(), message.from, message.tag, message.params, actions);
    }
    execute(actions);
  }

  void execute(const consensus::Actions& actions) {
    if (!iterating_) return;  // after the run loop nothing the protocol asks is carried out
    const consensus::ActionHandlers handle{
        [&](const consensus::SendParams& s) { send_model(s); },
        [&](const consensus::SendCoded& coded) {
          const consensus::CodedGradient& part = *coded.coded;
          const std::vector<std::uint32_t> covers(part.covers.begin(), part.covers.end());
          const std::vector<std::uint32_t> role(part.role.begin(), part.role.end());
          send(coded.to,
               wire::encode_coded_gradient(static_cast<wire::PeerId>(options_.peer), coded.tag,
                                           covers, role, part.compute_s, part.gradient->values()));
        },
        [&](const consensus::StartGradient& g) {
          compute_->recycle(protocol_->release_gradient());  // into the last gradient's memory
          compute_->submit(g);
        },
        [&](const consensus::ArmTimer& t) { timers_.push(t.at_s); },
        [&](const consensus::IterationCompleted& c) { completed(c.record); },
        [](const consensus::Finished&) {},  // the run loop asks protocol_->finished()
    };
    for (const auto& action : actions) std::visit(handle, action);
  }

  // With shared-memory slots the message names the slot the model was published in; otherwise
  // it carries the model.
  void send_model(const consensus::SendParams& s) {
    const auto self = static_cast<wire::PeerId>(options_.peer);
    const auto slot = own_slots_ ? own_slots_->publish(*s.params) : std::nullopt;
    const auto message = slot ? wire::encode_shared_model(self, s.tag, *slot, s.params)
                              : wire::encode_model(self, s.tag, s.params, s.params->values());
    if (slot) {
      report_.shared_models_sent += s.to.size();
      report_.shared_bytes += s.to.size() * s.params->values().size_bytes();
    }
    for (int j : s.to) send(j, message);
  }

  void completed(const consensus::IterationRecord& r) {
    ++report_.iterations;
    last_update_s_ = r.update_s;
    report_.waiting_s += r.wait_s();
    totals_.add(r);
    if (!hooks_.on_iteration) return;
    // In the files, times count from the first iteration, as in the simulator (the protocol's
    // clock began with the process, before the data load and the handshake).
    consensus::IterationRecord shifted = r;
    shifted.start_s -= began_s_;
    shifted.gradient_done_s -= began_s_;
    shifted.update_s -= began_s_;
    hooks_.on_iteration(shifted, last_loss_);
  }

  void print_progress(bool force) {
    if (!force && now_s() < next_progress_s_) return;
    if (force && printed_iterations_ == report_.iterations) return;
    printed_iterations_ = report_.iterations;
    next_progress_s_ = now_s() + options_.progress_interval_s;
    PeerProgress p;
    p.iteration = report_.iterations;
    p.iterations = config_.run.iterations;
    p.loss = last_loss_;
    p.accuracy = NAN;  // the launcher shows the mean model's
    p.elapsed_s = report_.iterations ? last_update_s_ - report_.startup_s : 0;
    p.waiting_s = report_.waiting_s;
    p.mean_backup = report_.iterations ? totals_.mean_backups() : NAN;
    std::cout << format_progress(p) << std::endl;
  }

  // The protocol stops awaiting a neighbour silent for peer_timeout_ms; record the departure
  // at the iteration it is noticed (a dead peer is not a departure at the end of the run).
  void note_silent_neighbours() {
    const double timeout_s = static_cast<double>(config_.cluster.peer_timeout_ms) / 1000.0;
    for (int j : neighbours_) {
      if (left_.count(j) || silent_.count(j) || now_s() - last_heard_s_[j] < timeout_s) continue;
      silent_.insert(j);
      report_.departures.push_back({j, protocol_->iteration(), "silent"});
    }
  }

  // BYE to every neighbour, then keep answering until each has left too (or gone silent
  // past peer_timeout_ms), so messages still queued reach peers that are behind.
  void say_goodbye() {
    const auto bye =
        wire::encode_bye(static_cast<wire::PeerId>(options_.peer), protocol_->iteration());
    for (int j : neighbours_) send(j, bye);
    const double timeout_s = static_cast<double>(config_.cluster.peer_timeout_ms) / 1000.0;
    const double until_s = now_s() + timeout_s;
    while (now_s() < until_s && !stop_requested_twice()) {
      bool all_gone = true;
      for (int j : neighbours_) {
        if (!left_.count(j) && now_s() - last_heard_s_[j] < timeout_s) all_gone = false;
      }
      if (all_gone && !sends_pending()) break;
      flush_pending();
      receive(std::chrono::milliseconds(sends_pending() ? 1 : 100));
    }
    for (int j : neighbours_) {
      if (!left_.count(j) && silent_.insert(j).second) {
        report_.departures.push_back({j, protocol_->iteration(), "silent"});
      }
    }
  }

  // A stop request during the goodbye phase cuts it short only if it came after finishing.
  bool stop_requested_twice() { return report_.finished && stop_requested(); }

  PeerReport finish_report() {
    const auto totals = transport_->send_totals();
    report_.messages_sent = totals.queued;
    report_.sends_refused = totals.dropped;
    report_.bytes_sent = totals.bytes_queued;
    for (std::size_t c = 0; c < wire::kWireErrorCount; ++c) {
      const auto cause = static_cast<wire::WireError>(c);
      if (auto count = transport_->rejections().count(cause)) {
        report_.rejected[std::string(wire::to_string(cause))] = count;
      }
    }
    report_.mean_awaited = totals_.mean_awaited();
    report_.mean_used = totals_.mean_used();
    report_.mean_backups = totals_.mean_backups();
    // The own model on the whole test set, for the per-peer table (the run's evaluation
    // uses the mean of the snapshots).
    if (report_.iterations > 0)
      report_.final_eval = trainer_->evaluate(protocol_->model()->values());
    const auto model = protocol_->model()->values();
    report_.final_model.assign(model.begin(), model.end());
    return std::move(report_);
  }

  const ExperimentConfig& config_;
  const PeerOptions& options_;
  const PeerHooks& hooks_;
  topology::Topology topology_;
  Clock::time_point start_;
  std::unique_ptr<training::PeerTrainer> trainer_;
  std::unique_ptr<consensus::PeerProtocol> protocol_;
  std::vector<int> neighbours_;
  std::unique_ptr<stragglers::DelayModel> delays_;
  std::unique_ptr<transport::ZmqTransport> transport_;
  std::unique_ptr<transport::OwnModelSlots> own_slots_;  // "shm": where our models go
  std::unique_ptr<transport::NeighbourModels> neighbour_models_;
  std::map<int, std::string> shared_model_names_;  // neighbours' slot objects ("shm")
  std::set<int> bad_shared_logged_;
  std::unique_ptr<ComputeThread> compute_;
  std::unique_ptr<StopWatcher> stop_watcher_;
  std::set<int> heard_;
  std::set<int> left_;
  std::set<int> silent_;  // recorded as departed "silent" (they may have come back since)
  std::map<int, double> last_heard_s_;
  std::map<int, std::deque<wire::EncodedMessage>> pending_;  // refused sends, oldest first
  std::priority_queue<double, std::vector<double>, std::greater<>> timers_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;  // delayed links
  std::uint64_t held_sequence_ = 0;
  std::map<int, double> last_release_s_;  // per neighbour: its last held message's release
  double next_progress_s_ = 0;
  std::int64_t printed_iterations_ = -1;
  double began_s_ = 0;
  bool iterating_ = true;  // false once the run loop ended: the protocol gets no more input
  bool started_ = false;   // the first iteration began (after the handshake and the go)
  double last_update_s_ = 0;
  double last_loss_ = NAN;
  std::int64_t next_instant_ = 0;
  metrics::IterationTotals totals_;
  PeerReport report_;
};

}  // namespace

std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

std::atomic<bool>& finish_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

std::atomic<bool>& start_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

PeerReport run_peer(const ExperimentConfig& config, const PeerOptions& options,
                    const PeerHooks& hooks) {
  // Before any thread exists, so every thread (ZeroMQ's included) inherits the mask.
  block_request_signals();
  Peer peer(config, options, hooks);
  return peer.run();
}

}  // namespace fastk::node::peer
