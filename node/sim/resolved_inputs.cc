#include "node/sim/resolved_inputs.h"

#include "node/metrics/output_files.h"
#include "node/metrics/run_metrics.h"

namespace fastk::node::sim {

void write_resolved_inputs(const std::filesystem::path& path, const SimulationInputs& in,
                           const topology::Topology& topo) {
  nlohmann::ordered_json j;
  j["run"] = {{"name", in.run.name},
              {"seed", in.run.seed},
              {"iterations", in.run.iterations},
              {"duration_s", in.run.duration_s},
              {"eval_interval_s", in.run.evaluation_interval_s(in.calibration ? 1.0 : 10.0)},
              {"target_accuracy", in.run.target_accuracy},
              {"target_loss", in.run.target_loss},
              {"stop_at_target", in.run.stop_at_target},
              {"output", in.run.output}};
  const auto& t = topo.spec;
  j["topology"] = {{"kind", topology::to_string(t.kind)},
                   {"peers", topo.graph.size()},
                   {"rows", t.rows},
                   {"cols", t.cols},
                   {"degree", t.degree},
                   {"probability", t.probability},
                   {"seed", t.seed},
                   {"weights", topology::to_string(t.weights)}};
  j["data"] = {{"kind", learning::to_string(in.data.kind)},
               {"dir", in.data.dir},
               {"partition", learning::to_string(in.data.partition.kind)},
               {"train_limit", in.data.train_limit},
               {"test_limit", in.data.test_limit},
               {"seed", in.data.seed}};
  j["model"] = {{"kind", learning::to_string(in.model.kind)},
                {"hidden", in.model.hidden},
                {"l2", in.model.l2},
                {"init_seed", in.model.init_seed}};
  j["optimizer"] = {{"lr", in.optimizer.lr},
                    {"batch_size", in.optimizer.batch_size},
                    {"seed", in.optimizer.seed}};
  const auto& p = in.consensus.protocol;
  j["consensus"] = {{"policy", consensus::to_string(p.policy.kind)},
                    {"backups", p.policy.backups},
                    {"slack", p.policy.slack},
                    {"window", p.policy.window},
                    {"gradient_window", p.policy.gradient_window},
                    {"warmup", p.policy.warmup},
                    {"smoothness", p.policy.smoothness},
                    {"disagreement_ema", p.policy.disagreement_ema},
                    {"disagreement_every", p.policy.disagreement_every},
                    {"gradient_stats_every", p.policy.gradient_stats_every},
                    {"m_min", p.m_min},
                    {"order", consensus::to_string(p.order)},
                    {"renormalisation", consensus::to_string(p.renormalisation)},
                    {"staleness", p.staleness},
                    {"max_gap", p.max_gap}};
  const auto& s = in.stragglers;
  nlohmann::ordered_json slow = nlohmann::ordered_json::array();
  for (const auto& sp : s.slow_peers) slow.push_back({{"peer", sp.peer}, {"factor", sp.factor}});
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  for (const auto& w : s.windows) {
    windows.push_back({{"peers", w.peers},
                       {"from_iteration", w.from_iteration},
                       {"to_iteration", w.to_iteration},
                       {"probability", w.probability},
                       {"factor", w.factor}});
  }
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const auto& l : s.links) {
    links.push_back({{"from", l.from}, {"to", l.to}, {"delay_s", l.delay_s}, {"factor", l.factor}});
  }
  j["stragglers"] = {{"compute_s", s.compute_s},
                     {"distribution", stragglers::to_string(s.distribution)},
                     {"shift", s.shift},
                     {"exp_mean", s.exp_mean},
                     {"pareto_alpha", s.pareto_alpha},
                     {"transient_probability", s.transient_probability},
                     {"transient_factor", s.transient_factor},
                     {"slow_peers", slow},
                     {"markov_good_to_bad", s.markov_good_to_bad},
                     {"markov_bad_to_good", s.markov_bad_to_good},
                     {"markov_factor", s.markov_factor},
                     {"windows", windows},
                     {"link_s", s.link_s},
                     {"link_jitter_s", s.link_jitter_s},
                     {"links", links},
                     {"seed", s.seed}};
  const auto& c = p.coding;
  j["coding"] = {{"scheme", coding::to_string(c.scheme)},
                 {"stragglers", c.stragglers},
                 {"deadline_s", c.deadline_s},
                 {"rescale", c.rescale},
                 {"split_batch", c.split_batch},
                 {"dynamic_roles", c.dynamic_roles}};
  // sim.threads is left out: it changes only the speed, never an output byte.
  j["sim"] = {{"per_peer_eval", in.sim.per_peer_eval}, {"calibration", in.sim.calibration}};
  if (in.calibration) j["calibration"] = calibration::to_json(*in.calibration);
  metrics::write_json_file(path, j);
}

}  // namespace fastk::node::sim
