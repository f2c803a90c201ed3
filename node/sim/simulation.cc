#include "node/sim/simulation.h"

#include <fstream>
#include <stdexcept>

#include "consensus/virtual_network.h"
#include "learning/data_sources.h"
#include "learning/model.h"
#include "learning/partition.h"
#include "learning/sampler.h"
#include "node/metrics/mean_model.h"
#include "node/metrics/output_files.h"
#include "node/sim/gradient_workers.h"
#include "node/sim/resolved_inputs.h"
#include "node/stragglers/delay_model.h"
#include "node/training/peer_trainer.h"

namespace fastk::node::sim {
namespace {

// Evaluates the mean model and (optionally) every peer's model.
metrics::Evaluation evaluate(const consensus::VirtualNetwork& net, learning::Model& model,
                             const learning::Dataset& test, bool per_peer, double time_s) {
  metrics::Evaluation e;
  e.time_s = time_s;
  const int n = net.size();
  e.peers = n;
  std::vector<std::span<const float>> models;
  double iterations = 0;
  for (int i = 0; i < n; ++i) {
    models.push_back(net.peer(i).model()->values());
    iterations += static_cast<double>(net.peer(i).iteration());
  }
  const metrics::MeanModel mean = metrics::mean_model(models);
  e.mean_iteration = iterations / n;
  e.consensus_distance = mean.consensus_distance;
  const learning::Evaluation at_mean = model.evaluate(mean.mean, test);
  e.test_loss = at_mean.loss;
  e.test_accuracy = at_mean.accuracy;
  if (per_peer) {
    for (int i = 0; i < n; ++i) {
      e.peer_accuracy.push_back(model.evaluate(net.peer(i).model()->values(), test).accuracy);
    }
  }
  return e;
}

// The machine: with a calibration, its costs and the measured base gradient time.
consensus::MachineCosts machine(const SimulationInputs& in, stragglers::DelaySpec& delays) {
  if (!in.calibration) return {};
  const auto& policy = in.consensus.protocol.policy;
  delays.compute_s = calibration::base_gradient_s(*in.calibration, policy.kind);
  return calibration::machine_costs(*in.calibration, in.topology, in.cluster, policy);
}

}  // namespace

SimulationResult simulate(const SimulationInputs& in, const std::filesystem::path& folder,
                          const EvaluationObserver& on_evaluation) {
  training::check_optimizer(in.optimizer);
  // Virtual seconds are real ones on a calibrated machine, abstract units otherwise.
  const double interval_s = in.run.evaluation_interval_s(in.calibration ? 1.0 : 10.0);
  const topology::Topology topo = topology::build_topology(in.topology);
  const int n = topo.graph.size();

  const learning::TrainTest data = learning::load_data(in.data);
  const learning::Partition partition = training::partition_training_set(
      data.train.labels, data.train.classes, data.train.size(), in.data, n);
  std::unique_ptr<learning::Model> model = learning::make_model(in.model, data.train);
  std::vector<float> initial(model->num_parameters());
  model->initialize(initial, in.model.init_seed);
  if (in.calibration) calibration::check_fits(*in.calibration, in.model, in.optimizer);

  std::vector<learning::BatchSampler> samplers;
  for (int i = 0; i < n; ++i) {
    samplers.emplace_back(partition.peer_indices[static_cast<std::size_t>(i)],
                          in.optimizer.batch_size, training::peer_seed(in.optimizer.seed, i));
  }

  consensus::ProtocolConfig protocol = in.consensus.protocol;
  protocol.iterations = in.run.iterations;
  protocol.learning_rate = in.optimizer.lr;
  const bool adaptive = protocol.policy.kind == consensus::PolicyKind::kAdaptive;
  std::vector<std::unique_ptr<consensus::PeerProtocol>> peers;
  const consensus::Params start = consensus::make_params(initial);
  for (int i = 0; i < n; ++i) {
    peers.push_back(std::make_unique<consensus::PeerProtocol>(i, topo.schedule, protocol, start));
  }
  stragglers::DelaySpec delay_spec = in.stragglers;
  consensus::MachineCosts costs = machine(in, delay_spec);
  stragglers::DelayModel delays(delay_spec, n);
  GradientWorkers gradients(*model, data.train, std::move(samplers), in.sim.threads, adaptive);
  if (protocol.coding.scheme != coding::Scheme::kNone) {
    gradients.enable_partitions(partition, in.optimizer.batch_size, in.optimizer.seed);
  }
  consensus::VirtualNetwork net(std::move(peers), delays, gradients, std::move(costs));

  metrics::RunMetrics out(folder, in.sim.per_peer_eval);
  write_resolved_inputs(folder / "resolved_config.json", in, topo);
  SimulationResult result;
  result.peers = n;
  net.on_record = [&](const consensus::IterationRecord& r) {
    out.record(r, gradients.last_loss(r.peer));
    result.end_time_s = std::max(result.end_time_s, r.update_s);
  };

  net.start(0.0);
  auto report = [&](double t) {
    const metrics::Evaluation e = evaluate(net, *model, data.test, in.sim.per_peer_eval, t);
    out.evaluation(e);
    if (on_evaluation) on_evaluation(e, out.totals());
  };
  report(0.0);
  // Evaluations every interval_s; the run ends at the first stop rule that applies.
  const double duration_s = in.run.duration_s > 0 ? in.run.duration_s : -1;
  result.end = "stuck";
  double t = 0;
  while (true) {
    double next = t + interval_s;
    if (duration_s > 0) next = std::min(next, duration_s);
    const bool more = net.run_until(next);
    t = next;
    report(t);
    if (net.all_finished()) {
      result.end = "iterations";
      break;
    }
    if (duration_s > 0 && t >= duration_s) {
      result.end = "duration";
      break;
    }
    if (in.run.stop_at_target && metrics::reaches_target(out.evaluations().back(), in.run)) {
      result.end = "target";
      break;
    }
    if (!more) break;  // nothing can happen any more
  }
  result.finished = result.end != "stuck";
  if (result.end != "iterations") result.end_time_s = t;
  // Final models, where real peers put theirs (peers/peer-<i>/model-final.f32, raw float32),
  // so that a simulation and a real run of one config can be compared byte for byte.
  for (int i = 0; i < n; ++i) {
    const auto dir = folder / "peers" / ("peer-" + std::to_string(i));
    std::filesystem::create_directories(dir);
    metrics::write_model(dir / "model-final.f32", net.peer(i).model()->values());
  }
  result.totals = out.totals();
  result.last = out.evaluations().back();
  result.time_to_target_s = metrics::time_to_target(out.evaluations(), in.run);
  result.events = net.events();
  result.messages = net.messages();
  std::int64_t dropped = 0;
  for (int i = 0; i < n; ++i) dropped += net.peer(i).dropped_messages();
  result.wait_fraction =
      result.end_time_s > 0 ? result.totals.wait_sum_s / (n * result.end_time_s) : 0.0;

  auto& s = result.summary;
  s["name"] = in.run.name;
  s["peers"] = n;
  s["topology"] = topology::to_string(in.topology.kind);
  s["policy"] = consensus::to_string(protocol.policy.kind);
  s["calibrated"] = in.calibration.has_value();
  s["iterations_per_peer"] = in.run.iterations;
  s["duration_s"] = in.run.duration_s;
  s["finished"] = result.finished;
  s["end"] = result.end;
  s["virtual_time_s"] = result.end_time_s;
  s["target_accuracy"] = in.run.target_accuracy;
  s["target_loss"] = in.run.target_loss;
  s["time_to_target_s"] =
      result.time_to_target_s ? nlohmann::ordered_json(*result.time_to_target_s) : nullptr;
  s["final_test_accuracy"] = result.last.test_accuracy;
  s["final_test_loss"] = result.last.test_loss;
  s["final_consensus_distance"] = result.last.consensus_distance;
  s["mean_awaited"] = result.totals.mean_awaited();
  s["mean_used"] = result.totals.mean_used();
  s["mean_backups"] = result.totals.mean_backups();
  s["mean_wait_s"] = result.totals.mean_wait_s();
  s["wait_fraction"] = result.wait_fraction;
  s["updates"] = result.totals.iterations;
  s["events"] = result.events;
  s["messages"] = result.messages;
  s["dropped_messages"] = dropped;
  metrics::write_json_file(folder / "summary.json", s);
  return result;
}

}  // namespace fastk::node::sim
