#include "node/peer/peer_runtime.h"

#include <cstdlib>
#include <iostream>

#include "consensus/comeback.h"
#include "consensus/peer_protocol.h"
#include "node/config/cluster.h"
#include "node/config/protocol_config.h"
#include "node/os/cpu_binding.h"
#include "node/peer/checkpoint.h"
#include "node/peer/peer_driver.h"
#include "node/peer/peer_id.h"
#include "node/peer/stop_watcher.h"
#include "node/stragglers/delay_model.h"
#include "node/training/peer_samples.h"
#include "node/training/peer_trainer.h"
#include "node/transport/shared_models.h"
#include "node/transport/zmq_transport.h"
#include "topology/topology.h"

namespace fastk::node::peer {
namespace {

constexpr int kBaseGradientRepeats = 20;  // gradients timed at start-up without a calibration

// [cluster] bind_cpus: this peer's block of the host's CPUs (cpu_binding.h). A process started
// by mpirun or srun keeps the CPUs its launcher chose: that is the launcher's job, and
// narrowing a per-rank mask by the host-wide index would leave CPUs idle.
void bind_cpus(const ClusterConfig& cluster, int peers, int self) {
  const std::string who = "peer " + std::to_string(self) + ": ";
  for (const char* rank : kRankVariables) {
    if (std::getenv(rank)) {
      std::cerr << who << "kept the CPUs its launcher gave it (" << rank
                << " is set; [cluster] bind_cpus)" << std::endl;
      return;
    }
  }
  const HostShare share = host_share(cluster, peers, self);
  try {
    const auto cpus = os::bind_to_cpu_share(share.local_index, share.local_count);
    std::cerr << who << "bound to CPU " << os::describe_cpus(cpus) << " (peer "
              << share.local_index + 1 << " of " << share.local_count
              << " on this host; [cluster] bind_cpus)" << std::endl;
  } catch (const std::runtime_error& e) {
    std::cerr << who << "not bound to CPUs: " << e.what() << std::endl;
  }
}

// The base of injected compute slowdowns: the calibration's, else timed here before the
// handshake (peers starting at once on shared cores inflate it).
double base_gradient_s(const PeerOptions& options, training::PeerTrainer& trainer) {
  if (options.base_gradient_parameters != 0 &&
      options.base_gradient_parameters != trainer.num_parameters()) {
    throw std::invalid_argument(
        "the calibration was measured for a model of " +
        std::to_string(options.base_gradient_parameters) + " parameters; this config's has " +
        std::to_string(trainer.num_parameters()) + " (run `fastk calibrate` on this config)");
  }
  if (options.base_gradient_s > 0) return options.base_gradient_s;
  const double base = trainer.time_gradient_s(kBaseGradientRepeats);
  std::cerr << "peer " << options.peer << ": base gradient time " << 1000 * base
            << " ms, measured at start-up (`fastk run` passes a calibrated one; "
               "docs/simulation.md)"
            << std::endl;
  return base;
}

// The peer's own key pair and every peer's public key, when its links use CURVE
// ([security], docs/security.md); empty for plain links.
std::optional<transport::CurveKeys> read_curve_keys(const ExperimentConfig& config, int peers,
                                                    const PeerOptions& options) {
  const std::string folder = key_folder(config.security, config.cluster, peers, options.keys);
  if (folder.empty()) return std::nullopt;
  std::vector<wire::PeerId> everyone(static_cast<std::size_t>(peers));
  for (int i = 0; i < peers; ++i)
    everyone[static_cast<std::size_t>(i)] = static_cast<wire::PeerId>(i);
  return transport::read_peer_keys(folder, static_cast<wire::PeerId>(options.peer), everyone);
}

// One `fastk node` peer's parts, built in dependency order (and destroyed in reverse: the
// threads that wake the transport go before it).
class RealPeer {
 public:
  RealPeer(const ExperimentConfig& config, const PeerOptions& options, const PeerHooks& hooks,
           RunRequests& requests);
  PeerReport run();

 private:
  void connect_neighbours();
  void share_models(const std::string& name);
  DriverSettings driver_settings() const;
  // With --resume: from the checkpoint if there is one, else joining (joins_).
  void resume();
  void save_checkpoint(std::int64_t iteration, std::span<const float> model) const;

  const ExperimentConfig& config_;
  const PeerOptions& options_;
  const PeerHooks& hooks_;
  RunRequests& requests_;
  std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
  topology::Topology topology_;
  int peers_;
  consensus::ProtocolConfig protocol_config_;
  std::unique_ptr<training::PeerTrainer> trainer_;
  double base_gradient_s_ = 0;
  std::unique_ptr<consensus::PeerProtocol> protocol_;
  stragglers::DelayModel delays_;
  std::optional<transport::CurveKeys> curve_keys_;  // with encrypted links
  std::unique_ptr<transport::ZmqTransport> transport_;
  std::unique_ptr<transport::OwnModelSlots> own_slots_;  // "shm": where our models go
  std::map<int, std::string> shared_model_names_;        // "shm": the neighbours' slots
  std::unique_ptr<SharedModelReader> shared_models_;
  std::unique_ptr<ComputeThread> compute_;
  std::unique_ptr<StopWatcher> stop_watcher_;
  bool joins_ = false;
};

RealPeer::RealPeer(const ExperimentConfig& config, const PeerOptions& options,
                   const PeerHooks& hooks, RunRequests& requests)
    : config_(config),
      options_(options),
      hooks_(hooks),
      requests_(requests),
      topology_(topology::build_topology(config.topology)),
      peers_(topology_.graph.size()),
      protocol_config_(protocol_config(config.consensus, config.run, config.optimizer,
                                       config.cluster, PeerRuntime::kReal)),
      delays_(config.stragglers, peers_) {
  if (options.peer < 0 || options.peer >= peers_) {
    throw std::runtime_error("peer id " + std::to_string(options.peer) + " is not in 0.." +
                             std::to_string(peers_ - 1));
  }
  // Before any thread starts (ZeroMQ's I/O thread, the compute thread), so that all of them
  // inherit the binding; the data are loaded on the bound CPUs too.
  if (config.cluster.bind_cpus) bind_cpus(config.cluster, peers_, options.peer);
  // Keys before the data: a missing or bad key file is reported at once.
  curve_keys_ = read_curve_keys(config, peers_, options);
  // Coded neighbourhoods: the partitions this peer holds (training/peer_samples.h).
  const auto stored = training::stored_partitions(topology_.graph, protocol_config_.coding);
  trainer_ = std::make_unique<training::PeerTrainer>(
      config.data, config.model, config.optimizer, peers_, options.peer,
      stored[static_cast<std::size_t>(options.peer)],
      training::flips_labels(protocol_config_, options.peer));
  base_gradient_s_ = base_gradient_s(options, *trainer_);
  protocol_ =
      std::make_unique<consensus::PeerProtocol>(options.peer, topology_.schedule, protocol_config_,
                                                consensus::make_params(trainer_->initial()));
  if (options.resume) resume();
  connect_neighbours();
  compute_ = std::make_unique<ComputeThread>(
      [this](const consensus::StartGradient& request, std::vector<float> buffer) {
        return trainer_->gradient(request, std::move(buffer));
      },
      [this](std::int64_t k, double work) {
        // A coded peer computing `work` gradients straggles on each, as in `fastk sim`.
        return work * delays_.injected_sleep_s(options_.peer, k, base_gradient_s_);
      },
      [this] { transport_->wake(); },
      [this](const consensus::StartValidation& request) { return trainer_->losses(request); });
  stop_watcher_ = std::make_unique<StopWatcher>(
      requests_, [this] { transport_->wake(); }, options.stop_on_stdin_eof);
}

void RealPeer::resume() {
  auto saved = read_checkpoint(options_.checkpoint, {options_.peer, options_.config_fingerprint,
                                                     options_.run_id, trainer_->num_parameters()});
  const auto how = saved ? consensus::Comeback::kFromCheckpoint : consensus::Comeback::kJoining;
  if (const auto why = consensus::why_no_comeback(protocol_config_, how)) {
    throw std::invalid_argument("--resume: " + *why + "; restart the run");
  }
  if (!saved) {
    joins_ = true;
    std::cerr << "peer " << options_.peer << ": no checkpoint at " << options_.checkpoint.string()
              << "; joining from the average of the neighbours' models" << std::endl;
    return;
  }
  try {
    trainer_->restore_samplers(std::move(saved->samplers));
    protocol_ = std::make_unique<consensus::PeerProtocol>(
        options_.peer, topology_.schedule, protocol_config_, consensus::make_params(saved->model));
    protocol_->resume_at(saved->iteration);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("checkpoint '" + options_.checkpoint.string() +
                             "' cannot be used: " + e.what());
  }
  std::cerr << "peer " << options_.peer << ": resuming at iteration " << saved->iteration
            << " from " << options_.checkpoint.string() << std::endl;
}

void RealPeer::save_checkpoint(std::int64_t iteration, std::span<const float> model) const {
  Checkpoint c;
  c.peer = options_.peer;
  c.config = options_.config_fingerprint;
  c.run = options_.run_id;
  c.iteration = iteration;
  c.model.assign(model.begin(), model.end());
  c.samplers = trainer_->sampler_states();
  write_checkpoint(options_.checkpoint, c);
}

// Connects to every peer this one sends to or receives from in any round (on a time-varying
// or directed graph the two differ); only the models of those it receives from are read.
void RealPeer::connect_neighbours() {
  const auto& contacts = protocol_->contacts();
  const PeerEndpoints own = peer_endpoints(config_.cluster, peers_, options_.peer);
  transport::TransportOptions link_options;
  if (curve_keys_) {  // only the contacts' keys open the receive socket
    link_options.curve = transport::CurveKeys{curve_keys_->own, {}};
    for (int j : contacts) {
      const auto peer = static_cast<wire::PeerId>(j);
      link_options.curve->peers[peer] = curve_keys_->peers.at(peer);
    }
  }
  transport::make_ipc_folder_private(own.bind);
  transport_ = std::make_unique<transport::ZmqTransport>(
      wire::WirePeers(static_cast<wire::PeerId>(options_.peer),
                      {options_.run_id, static_cast<std::uint32_t>(peers_)},
                      std::vector<wire::PeerId>(contacts.begin(), contacts.end())),
      own.bind, std::move(link_options));
  for (int j : contacts) {
    transport_->connect(static_cast<wire::PeerId>(j),
                        peer_endpoints(config_.cluster, peers_, j).connect);
  }
  if (!own.shared_models.empty()) {
    for (int j : protocol_->known_neighbours()) {
      shared_model_names_[j] = peer_endpoints(config_.cluster, peers_, j).shared_models;
    }
  }
  // Models every one of which must arrive (models_kept_queued() == 0: push-sum's masses) go
  // over the socket: a shared slot rewritten before a neighbour read it (lapped) would lose
  // one, which no newer model makes up for (docs/protocol.md §4.4).
  if (!own.shared_models.empty() && protocol_->models_kept_queued() != 0)
    share_models(own.shared_models);
  shared_models_ = std::make_unique<SharedModelReader>(
      options_.run_id, options_.peer, protocol_->model()->values().size(), shared_model_names_);
}

// local_transport = "shm": the protocol writes its models into slots neighbours read in place
// (node/transport/shared_models.h). Created after binding the socket, whose endpoint the name
// is derived from, so no live peer owns the name.
void RealPeer::share_models(const std::string& name) {
  const std::size_t floats = protocol_->model()->values().size();
  const auto& receivers = protocol_->receivers();  // the peers that map this region
  const std::vector<wire::PeerId> readers(receivers.begin(), receivers.end());
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

DriverSettings RealPeer::driver_settings() const {
  DriverSettings s;
  s.self = options_.peer;
  s.run = {options_.run_id, static_cast<std::uint32_t>(peers_)};
  s.iterations = config_.run.iterations;
  s.startup_timeout_s = static_cast<double>(config_.cluster.startup_timeout_ms) / 1000.0;
  s.peer_timeout_s = static_cast<double>(config_.cluster.peer_timeout_ms) / 1000.0;
  s.duration_s = config_.run.duration_s;
  s.wait_for_start = options_.wait_for_start && !options_.resume;  // the run has started
  s.join = joins_;
  s.began_before = options_.began_before;
  s.progress = &std::cout;
  s.progress_interval_s = options_.progress_interval_s;
  s.epoch_s = options_.epoch_s;
  s.eval_interval_s = options_.eval_interval_s;
  s.endpoint_of = [this](int j) { return peer_endpoints(config_.cluster, peers_, j).connect; };
  s.origin = origin_;
  return s;
}

PeerReport RealPeer::run() {
  DriverParts parts{*transport_,
                    *protocol_,
                    *compute_,
                    requests_,
                    hooks_,
                    &delays_,
                    own_slots_.get(),
                    shared_models_.get(),
                    {},
                    {config_.run.checkpoint_every, config_.run.checkpoint_every_s}};
  if (!options_.checkpoint.empty()) {
    parts.save_checkpoint = [this](std::int64_t k, std::span<const float> model) {
      save_checkpoint(k, model);
    };
  }
  PeerDriver driver(driver_settings(), std::move(parts));
  PeerReport report = driver.run();
  report.base_gradient_s = base_gradient_s_;
  report.links = curve_keys_ ? "curve" : "plain";
  report.dropped = metrics::by_cause(protocol_->drops());
  // The own model on the whole test set, for the per-peer table (the run's evaluation uses
  // the mean of the snapshots).
  const consensus::Params final_model = protocol_->debiased_model();  // push-sum: x / w
  const auto model = final_model->values();
  if (report.iterations > 0 && options_.evaluate_final)
    report.final_eval = trainer_->evaluate(model);
  report.final_model.assign(model.begin(), model.end());
  return report;
}

}  // namespace

PeerReport run_peer(const ExperimentConfig& config, const PeerOptions& options,
                    const PeerHooks& hooks, RunRequests& requests) {
  // Before any thread exists, so every thread (ZeroMQ's included) inherits the mask.
  block_request_signals();
  RealPeer peer(config, options, hooks, requests);
  return peer.run();
}

}  // namespace fastk::node::peer
