#include "node/metrics/resolved_config.h"

#include "node/stragglers/delay_spec.h"

namespace fastk::node::metrics {
namespace {

using Json = nlohmann::ordered_json;

Json topology_json(const topology::Topology& topology) {
  const auto& t = topology.spec;
  return {{"kind", topology::to_string(t.kind)},
          {"peers", topology.graph.size()},
          {"rows", t.rows},
          {"cols", t.cols},
          {"degree", t.degree},
          {"probability", t.probability},
          {"seed", t.seed},
          {"weights", topology::to_string(t.weights)}};
}

// [data], [model] and [optimizer], into `out`.
void add_learning_tables(const ExperimentConfig& c, Json& out) {
  out["data"] = {{"kind", learning::to_string(c.data.kind)},
                 {"dir", c.data.dir},
                 {"partition", learning::to_string(c.data.partition.kind)},
                 {"train_limit", c.data.train_limit},
                 {"test_limit", c.data.test_limit},
                 {"seed", c.data.seed}};
  out["model"] = {{"kind", learning::to_string(c.model.kind)},
                  {"hidden", c.model.hidden},
                  {"l2", c.model.l2},
                  {"init_seed", c.model.init_seed}};
  out["optimizer"] = {
      {"lr", c.optimizer.lr}, {"batch_size", c.optimizer.batch_size}, {"seed", c.optimizer.seed}};
}

Json consensus_json(const consensus::ProtocolConfig& p) {
  return {{"policy", consensus::to_string(p.policy.kind)},
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
}

Json coding_json(const coding::NeighbourhoodCodeSpec& c) {
  return {{"scheme", coding::to_string(c.scheme)},
          {"stragglers", c.stragglers},
          {"deadline_s", c.deadline_s},
          {"rescale", c.rescale},
          {"split_batch", c.split_batch},
          {"dynamic_roles", c.dynamic_roles}};
}

// The lists of [stragglers] (slow peers, windows, links), into `out`.
void add_straggler_lists(const stragglers::DelaySpec& s, Json& out) {
  Json slow = Json::array();
  for (const auto& sp : s.slow_peers) slow.push_back({{"peer", sp.peer}, {"factor", sp.factor}});
  Json windows = Json::array();
  for (const auto& w : s.windows) {
    windows.push_back({{"peers", w.peers},
                       {"from_iteration", w.from_iteration},
                       {"to_iteration", w.to_iteration},
                       {"probability", w.probability},
                       {"factor", w.factor}});
  }
  Json links = Json::array();
  for (const auto& l : s.links) {
    links.push_back({{"from", l.from}, {"to", l.to}, {"delay_s", l.delay_s}, {"factor", l.factor}});
  }
  out["slow_peers"] = slow;
  out["windows"] = windows;
  out["links"] = links;
}

Json stragglers_json(const stragglers::DelaySpec& s) {
  Json j = {{"compute_s", s.compute_s},
            {"distribution", stragglers::to_string(s.distribution)},
            {"shift", s.shift},
            {"exp_mean", s.exp_mean},
            {"pareto_alpha", s.pareto_alpha},
            {"transient_probability", s.transient_probability},
            {"transient_factor", s.transient_factor},
            {"markov_good_to_bad", s.markov_good_to_bad},
            {"markov_bad_to_good", s.markov_bad_to_good},
            {"markov_factor", s.markov_factor},
            {"link_s", s.link_s},
            {"link_jitter_s", s.link_jitter_s},
            {"seed", s.seed}};
  add_straggler_lists(s, j);
  return j;
}

Json cluster_json(const ClusterConfig& c) {
  return {{"hosts", c.hosts},
          {"base_port", c.base_port},
          {"endpoints", c.endpoints},
          {"peer_timeout_ms", c.peer_timeout_ms},
          {"startup_timeout_ms", c.startup_timeout_ms},
          {"local_transport", c.local_transport},
          {"bind_cpus", c.bind_cpus}};
}

}  // namespace

Json resolved_config(const ExperimentConfig& c, const topology::Topology& topology,
                     double eval_interval_s) {
  Json j;
  j["run"] = {{"name", c.run.name},
              {"seed", c.run.seed},
              {"iterations", c.run.iterations},
              {"duration_s", c.run.duration_s},
              {"eval_interval_s", eval_interval_s},
              {"target_accuracy", c.run.target_accuracy},
              {"target_loss", c.run.target_loss},
              {"stop_at_target", c.run.stop_at_target},
              {"output", c.run.output}};
  j["topology"] = topology_json(topology);
  add_learning_tables(c, j);
  j["consensus"] = consensus_json(c.consensus.protocol);
  j["stragglers"] = stragglers_json(c.stragglers);
  j["coding"] = coding_json(c.consensus.protocol.coding);
  j["cluster"] = cluster_json(c.cluster);
  // sim.threads is left out: it changes only the speed, never an output byte.
  j["sim"] = {{"per_peer_eval", c.sim.per_peer_eval}, {"calibration", c.sim.calibration}};
  return j;
}

}  // namespace fastk::node::metrics
