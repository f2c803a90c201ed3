#include "node/sim/simulation.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "learning/data_sources.h"
#include "learning/model.h"
#include "learning/partition.h"
#include "learning/sampler.h"
#include "node/config/protocol_config.h"
#include "node/config/resolved_config.h"
#include "node/metrics/mean_model.h"
#include "node/metrics/output_files.h"
#include "node/metrics/peer_summary.h"
#include "node/metrics/run_summary.h"
#include "node/sim/gradient_workers.h"
#include "node/stragglers/delay_model.h"
#include "node/training/peer_trainer.h"
#include "simulation/model_pool.h"
#include "simulation/virtual_network.h"

namespace fastk::node::sim {
namespace {

// Evaluates the mean model and (optionally) every peer's model.
// With an [attack], the mean model is the honest peers' (metrics::in_mean_model).
metrics::Evaluation evaluate(const simulation::VirtualNetwork& net, learning::Model& model,
                             const learning::Dataset& test, bool per_peer, double time_s,
                             const std::optional<consensus::AttackSpec>& attack) {
  metrics::Evaluation e;
  e.time_s = time_s;
  const int n = net.size();
  std::vector<consensus::Params> kept;  // push-sum: de-biased copies, alive while read
  std::vector<std::span<const float>> models, honest;
  double iterations = 0;
  for (int i = 0; i < n; ++i) {
    kept.push_back(net.peer(i).debiased_model());
    models.push_back(kept.back()->values());
    if (!metrics::in_mean_model(attack, i)) continue;
    honest.push_back(models.back());
    iterations += static_cast<double>(net.peer(i).iteration());
  }
  e.peers = static_cast<int>(honest.size());
  const metrics::MeanModel mean = metrics::mean_model(honest);
  e.mean_iteration = iterations / e.peers;
  e.consensus_distance = mean.consensus_distance;
  const learning::Evaluation at_mean = model.evaluate(mean.mean, test);
  e.test_loss = at_mean.loss;
  e.test_accuracy = at_mean.accuracy;
  if (per_peer) {
    for (int i = 0; i < n; ++i) {
      e.peer_accuracy.push_back(model.evaluate(models[static_cast<std::size_t>(i)], test).accuracy);
    }
  }
  return e;
}

// The machine: with a calibration, its costs and the measured base gradient time; and the
// links' rate, a setting of its own.
simulation::MachineCosts machine(const SimulationInputs& in, stragglers::DelaySpec& delays) {
  simulation::MachineCosts costs;
  if (in.calibration) {
    if (in.consensus.protocol.validate &&
        in.consensus.protocol.validation_score == consensus::ValidationScore::kLoss &&
        !(in.calibration->loss_per_sample_s > 0)) {
      throw std::invalid_argument(
          "consensus.validate: the calibration has no loss time per sample (it predates its "
          "measurement); run `fastk calibrate` again");
    }
    delays.compute_s = in.calibration->gradient_s;  // what slowdowns multiply
    costs = calibration::machine_costs(
        *in.calibration, in.topology, in.cluster, in.consensus.protocol.policy, in.optimizer,
        in.consensus.protocol.compression, in.consensus.protocol.error_reset);
  }
  costs.link_bytes_per_s = in.sim.link_rate_mbit * 1e6 / 8;
  return costs;
}

// Runs `net` from 0, evaluating every interval_s of virtual time, until the first stop rule
// that applies; returns how the run ended ("stuck" if nothing could happen any more) and
// the virtual time of the last evaluation.
std::pair<std::string, double> run_to_stop_rule(simulation::VirtualNetwork& net,
                                                const SimulationInputs& in, double interval_s,
                                                const std::function<void(double)>& report,
                                                const metrics::RunMetrics& out) {
  if (in.replay) {
    net.start_at(in.replay->start_s);
  } else {
    net.start(0.0);
  }
  report(0.0);
  const double duration_s = in.run.duration_s > 0 ? in.run.duration_s : -1;
  double t = 0;
  while (true) {
    double next = t + interval_s;
    if (duration_s > 0) next = std::min(next, duration_s);
    const bool more = net.run_until(next);
    t = next;
    report(t);
    if (net.all_finished()) return {"iterations", t};
    if (duration_s > 0 && t >= duration_s) return {"duration", t};
    if (in.run.stop_at_target && metrics::reaches_target(out.evaluations().back(), in.run)) {
      return {"target", t};
    }
    if (!more) return {"stuck", t};
  }
}

// Per-peer figures of the simulated peers, for their summaries.
struct SimulatedPeers {
  explicit SimulatedPeers(int n) : totals(n), compute_s(n, 0.0), last_update_s(n, 0.0) {}
  void record(const consensus::IterationRecord& r) {
    const auto i = static_cast<std::size_t>(r.peer);
    totals[i].add(r);
    compute_s[i] += r.gradient_done_s - r.start_s + r.validation_s;
    last_update_s[i] = r.update_s;
  }
  std::vector<metrics::IterationTotals> totals;
  std::vector<double> compute_s;
  std::vector<double> last_update_s;
};

// One simulated peer's report, in the schema real peers write (metrics/peer_summary.h).
metrics::PeerReport peer_report(const simulation::VirtualNetwork& net, const SimulatedPeers& peers,
                                const SimulationResult& result, int i) {
  const auto u = static_cast<std::size_t>(i);
  metrics::PeerReport r;
  r.simulated = true;
  r.peer = i;
  r.iterations = peers.totals[u].iterations;
  r.finished = !net.away(i) && (net.peer(i).finished() || result.finished);
  r.end = net.away(i) ? "left" : net.peer(i).finished() ? "iterations" : result.end;
  r.elapsed_s = peers.last_update_s[u];
  r.waiting_s = peers.totals[u].wait_sum_s;
  r.compute_s = peers.compute_s[u];
  r.gossips = peers.totals[u].gossips;
  r.mean_awaited = peers.totals[u].mean_awaited();
  r.mean_used = peers.totals[u].mean_used();
  r.mean_backups = peers.totals[u].mean_backups();
  r.rejected_models = peers.totals[u].rejected;
  r.dropped = metrics::by_cause(net.peer(i).drops());
  return r;
}

// The peers that get files: every one, or sim.peer_files of them evenly spaced.
std::vector<int> peers_with_files(int n, int limit) {
  std::vector<int> chosen;
  const std::int64_t count = std::min(n, limit);
  for (std::int64_t i = 0; i < count; ++i) chosen.push_back(static_cast<int>(i * n / count));
  return chosen;
}

// Where real peers put theirs, each peer's files: peers/peer-<i>/model-final.f32 (raw
// float32, so that a simulation and a real run of one config can be compared byte for byte)
// and summary.json with the own final model's test figures (one evaluation per peer, as a
// real run makes at its end).
// Returns the summaries, for the run's summary.
nlohmann::ordered_json write_peer_files(const simulation::VirtualNetwork& net,
                                        const SimulatedPeers& peers, const SimulationResult& result,
                                        const SimulationInputs& in, learning::Model& model,
                                        const learning::Dataset& test,
                                        const std::filesystem::path& folder) {
  auto summaries = nlohmann::ordered_json::array();
  for (const int i : peers_with_files(net.size(), in.sim.peer_files)) {
    const auto dir = metrics::peer_folder(folder, i);
    std::filesystem::create_directories(dir);
    const consensus::Params final_model = net.peer(i).debiased_model();
    const auto values = final_model->values();
    metrics::write_model(dir / "model-final.f32", values);
    metrics::PeerReport r = peer_report(net, peers, result, i);
    r.base_gradient_s = in.calibration ? in.calibration->gradient_s : NAN;
    r.final_eval = model.evaluate(values, test);
    summaries.push_back(metrics::to_json(r));
    metrics::write_json_file(dir / "summary.json", summaries.back());
  }
  return summaries;
}

// The simulation's inputs as the config they came from.
ExperimentConfig as_config(const SimulationInputs& in) {
  ExperimentConfig config;
  config.overrides = in.overrides;
  config.run = in.run;
  config.topology = in.topology;
  config.data = in.data;
  config.model = in.model;
  config.optimizer = in.optimizer;
  config.consensus = in.consensus;
  config.stragglers = in.stragglers;
  config.cluster = in.cluster;
  config.sim = in.sim;
  config.churn = in.churn;
  return config;
}

// summary.json, in the schema `fastk run` writes too (metrics/run_summary.h).
metrics::RunSummary summary_of(const SimulationResult& result, const SimulationInputs& in,
                               std::int64_t dropped_messages, nlohmann::ordered_json per_peer) {
  metrics::RunSummary s = metrics::summary_of_config(as_config(in), result.peers, "sim");
  s.calibrated = in.calibration.has_value();
  s.ok = result.finished;
  s.finished = result.finished;
  s.end = result.end;
  s.training_phase_s = result.end_time_s;
  s.base_gradient_s = in.calibration ? in.calibration->gradient_s : NAN;
  s.time_to_target_s = result.time_to_target_s;
  s.last = result.last;
  s.totals = result.totals;
  s.wait_fraction = result.wait_fraction;
  s.messages = result.messages;
  s.dropped_messages = dropped_messages;
  s.events = result.events;
  s.peers_reported = result.peers;
  s.per_peer = std::move(per_peer);
  return s;
}

// Virtual seconds are real ones on a calibrated machine, units of stragglers.compute_s (one
// plain gradient) otherwise. Without a calibration, a run.eval_interval_s finer than one
// gradient is a setting for real peers' wall clock (the quickstart's 0.1 s): taken as
// virtual, it would evaluate the mean model many times per gradient and take hours, so the
// simulation evaluates at the automatic interval instead and says so.
double evaluation_interval_s(const SimulationInputs& in, bool tell) {
  const double gradient_s = in.stragglers.compute_s > 0 ? in.stragglers.compute_s : 1.0;
  const bool real_seconds = in.calibration || in.replay;
  const double automatic_s = real_seconds ? kWallClockEvaluationInterval_s : 10.0 * gradient_s;
  const double interval_s = in.run.evaluation_interval_s(automatic_s);
  if (real_seconds || in.run.eval_interval_s <= 0 ||
      in.run.eval_interval_s >= in.stragglers.compute_s) {
    return interval_s;
  }
  const double replaced_s =
      std::max(in.run.duration_s > 0 ? in.run.duration_s / 20 : automatic_s, gradient_s);
  if (tell) {
    std::cout << "fastk sim: run.eval_interval_s = " << in.run.eval_interval_s
              << " is finer than a gradient (" << in.stragglers.compute_s
              << " virtual s without --calibration): wall time for real peers; evaluating every "
              << replaced_s << " virtual s instead (--calibration simulates this machine's seconds)"
              << std::endl;
  }
  return replaced_s;
}

// resolved_config.json: the config as the simulation used it, with its calibration.
void write_resolved_config(const std::filesystem::path& path, const SimulationInputs& in,
                           const topology::Topology& topo) {
  nlohmann::ordered_json j =
      resolved_config(as_config(in), topo, evaluation_interval_s(in, /*tell=*/false));
  if (in.calibration) j["calibration"] = calibration::to_json(*in.calibration);
  metrics::write_json_file(path, j);
}

// One protocol state machine per peer, all starting from `initial`, writing their models into
// buffers of one pool (simulation/model_pool.h).
std::vector<std::unique_ptr<consensus::PeerProtocol>> make_peers(
    const topology::Topology& topo, const consensus::ProtocolConfig& protocol,
    const std::vector<float>& initial) {
  std::vector<std::unique_ptr<consensus::PeerProtocol>> peers;
  const consensus::Params start = consensus::make_params(initial);
  std::shared_ptr<simulation::ModelPool> models;
  for (int i = 0; i < topo.graph.size(); ++i) {
    peers.push_back(std::make_unique<consensus::PeerProtocol>(i, topo.schedule, protocol, start));
    // The protocol's state may be longer than the model (push-sum adds its weight).
    if (!models) {
      models = std::make_shared<simulation::ModelPool>(peers.back()->model()->values().size());
    }
    peers.back()->set_buffer_source(models->source());
  }
  return peers;
}

// [churn] (docs/simulation.md §9): the leaves and comebacks on the schedule. A peer that comes
// back is a new process of it, as a real one is: its protocol starts afresh and joins from its
// neighbours' models, and it gives up waiting for silent ones after [cluster] peer_timeout_ms,
// as a joining real peer does.
void schedule_churn(simulation::VirtualNetwork& net, const SimulationInputs& in,
                    const topology::Topology& topo, const std::vector<float>& initial) {
  if (in.churn.schedule.empty()) return;
  consensus::ProtocolConfig joining =
      protocol_config(in.consensus, in.run, in.optimizer, in.cluster, PeerRuntime::kReal);
  const auto models = std::make_shared<simulation::ModelPool>(net.peer(0).model()->values().size());
  net.make_peer = [joining, models, &topo, start = consensus::make_params(initial)](int peer) {
    auto fresh = std::make_unique<consensus::PeerProtocol>(peer, topo.schedule, joining, start);
    fresh->set_buffer_source(models->source());
    return fresh;
  };
  for (const ChurnEvent& e : in.churn.schedule) {
    if (e.peer >= net.size()) {
      throw std::invalid_argument("[churn]: peer " + std::to_string(e.peer) + " is not a peer of " +
                                  "the run (0 to " + std::to_string(net.size() - 1) + ")");
    }
    switch (e.kind) {
      case ChurnEvent::Kind::kLeave:
        net.leave_at(e.peer, e.at_s);
        break;
      case ChurnEvent::Kind::kJoin:
        net.rejoin_at(e.peer, e.at_s);
        break;
    }
  }
}

// Each peer's samples as a real peer draws them (training/peer_samples.h).
std::vector<training::PeerSamples> every_peers_samples(const topology::Topology& topo,
                                                       const consensus::ProtocolConfig& protocol,
                                                       const learning::Partition& partition,
                                                       const learning::OptimizerSpec& optimizer) {
  const auto stored = training::stored_partitions(topo.graph, protocol.coding);
  std::vector<training::PeerSamples> samples;
  for (int i = 0; i < topo.graph.size(); ++i) {
    samples.push_back(training::peer_samples(partition, i, stored[static_cast<std::size_t>(i)],
                                             optimizer.batch_size, optimizer.seed));
  }
  return samples;
}

// The run's totals, last evaluation, time to target and counts into `result`; returns the
// messages the protocols dropped.
std::int64_t add_outcome(const simulation::VirtualNetwork& net, const metrics::RunMetrics& out,
                         const RunConfig& run, SimulationResult& result) {
  result.totals = out.totals();
  result.last = out.evaluations().back();
  result.time_to_target_s = metrics::time_to_target(out.evaluations(), run);
  result.events = net.events();
  result.messages = net.messages();
  result.wait_fraction =
      result.end_time_s > 0 ? result.totals.wait_sum_s / (net.size() * result.end_time_s) : 0.0;
  std::int64_t dropped = 0;
  for (int i = 0; i < net.size(); ++i) dropped += net.peer(i).dropped_messages();
  return dropped;
}

// A label_flip attacker's rows: only it samples them (unless peers share samples: refused).
void flip_attackers_labels(const consensus::ProtocolConfig& protocol,
                           const learning::Partition& partition, learning::Dataset& train) {
  const int n = partition.peers();
  for (int p = 0; p < n; ++p) {
    if (training::flips_labels(protocol, p)) {
      if (training::peers_share_samples(n, train.size())) {
        throw std::invalid_argument(
            "[attack] kind = \"label_flip\": " + std::to_string(n) + " peers share the " +
            std::to_string(train.size()) +
            " training samples, so a flipping peer would flip its honest group-mates' too");
      }
      training::flip_labels(train, partition.peer_indices[static_cast<std::size_t>(p)]);
    }
  }
}

// The run's totals into `result`, and its files: each peer's, peer_accuracy.csv and the
// summary.
void write_outcome(const simulation::VirtualNetwork& net, const metrics::RunMetrics& out,
                   const SimulatedPeers& peers, const SimulationInputs& in, learning::Model& model,
                   const learning::Dataset& test, const std::filesystem::path& folder,
                   SimulationResult& result) {
  const std::int64_t dropped = add_outcome(net, out, in.run, result);
  auto per_peer = write_peer_files(net, peers, result, in, model, test, folder);
  if (!in.sim.per_peer_eval) {
    metrics::write_final_peer_accuracy(folder, result.last.time_s, per_peer);
  }
  metrics::RunSummary summary = summary_of(result, in, dropped, std::move(per_peer));
  result.summary = metrics::to_json(summary);
  metrics::write_json_file(folder / "summary.json", result.summary);
}

}  // namespace

SimulationResult simulate(const SimulationInputs& in, const std::filesystem::path& folder,
                          const EvaluationObserver& on_evaluation,
                          const RecordObserver& on_record) {
  training::check_optimizer(in.optimizer);
  if (in.replay && in.calibration) throw std::invalid_argument("a replay takes no calibration");
  const double interval_s = evaluation_interval_s(in, /*tell=*/true);
  const topology::Topology topo = topology::build_topology(in.topology);
  const int n = topo.graph.size();
  learning::TrainTest data = learning::load_data(in.data);
  const learning::Partition partition =
      training::partition_training_set(data.train.labels, data.train.classes, data.train.size(),
                                       in.data, n, in.optimizer.batch_size);
  // A replay re-enacts real peers: their silence timeout too.
  const consensus::ProtocolConfig protocol =
      protocol_config(in.consensus, in.run, in.optimizer, in.cluster,
                      in.replay ? PeerRuntime::kReal : PeerRuntime::kSimulated);
  flip_attackers_labels(protocol, partition, data.train);
  std::unique_ptr<learning::Model> model =
      training::make_training_model(in.model, in.data, data.train);
  std::vector<float> initial(model->num_parameters());
  model->initialize(initial, in.model.init_seed);
  if (in.calibration) {
    calibration::check_fits(*in.calibration, in.model, in.optimizer, model->num_parameters());
  }
  auto samples = every_peers_samples(topo, protocol, partition, in.optimizer);
  stragglers::DelaySpec delay_spec = in.stragglers;
  simulation::MachineCosts costs = machine(in, delay_spec);
  stragglers::DelayModel delays(delay_spec, n);
  GradientWorkers gradients(*model, data.train, std::move(samples), in.sim.threads);
  consensus::DelaySource& times = in.replay ? *in.replay->delays : delays;
  simulation::VirtualNetwork net(make_peers(topo, protocol, initial), times, gradients,
                                 std::move(costs));
  net.goodbyes_always = in.replay.has_value();
  schedule_churn(net, in, topo, initial);
  metrics::RunMetrics out(folder, in.sim.per_peer_eval, in.run.neighbours_csv);
  write_resolved_config(folder / "resolved_config.json", in, topo);
  SimulationResult result;
  result.peers = n;
  SimulatedPeers peers(n);
  net.on_record = [&](const consensus::IterationRecord& r) {
    out.record(r, gradients.last_loss(r.peer));
    peers.record(r);
    result.end_time_s = std::max(result.end_time_s, r.update_s);
    if (on_record) on_record(r);
  };
  const auto report = [&](double t) {
    const metrics::Evaluation e =
        evaluate(net, *model, data.test, in.sim.per_peer_eval, t, protocol.attack);
    out.evaluation(e);
    if (on_evaluation) on_evaluation(e, out.totals());
  };
  const auto [end, last_evaluation_s] = run_to_stop_rule(net, in, interval_s, report, out);
  net.stop();  // peers still iterating stop, and take the ad_psgd replies in flight
  result.end = end;
  result.finished = end != "stuck";
  if (end != "iterations") result.end_time_s = last_evaluation_s;

  write_outcome(net, out, peers, in, *model, data.test, folder, result);
  return result;
}

}  // namespace fastk::node::sim
