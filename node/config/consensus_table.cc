// [consensus]: the backup policy and protocol options of every peer.
#include "consensus/mixing_variant.h"
#include "consensus/mixing_weights.h"
#include "consensus/peer_protocol.h"
#include "node/config/tables.h"

namespace fastk::node {

namespace {

// What AD-PSGD cannot run with, named at the key that asks for it (the protocol refuses the
// same; a graph that is not bipartite is found once it is built: PairwiseAveraging).
void check_ad_psgd(TableReader& t, const consensus::ProtocolConfig& p,
                   const topology::TopologySpec& topology) {
  const auto refuse = [&](const std::string& key, const std::string& why) {
    t.errors().add(t.path_of(key), why + " (consensus.policy = \"ad_psgd\")");
  };
  if (p.push_sum) refuse("push_sum", "has no use: pairwise averages keep the mean themselves");
  if (p.keep_connected) refuse("keep_connected", "has no use: no peer waits for a neighbour");
  if (p.max_gap > 0) refuse("max_gap", "has no use: AD-PSGD is asynchronous");
  if (p.order != consensus::UpdateOrder::kCombineThenAdapt) {
    refuse("order", "cannot be adapt_then_combine: a peer averages, then steps");
  }
  if (topology.directed || topology.kind == topology::TopologyKind::kOnePeerExponential) {
    refuse("policy",
           "needs a fixed undirected graph, whose two sides are the active and "
           "passive peers");
  }
}

}  // namespace

void read_consensus_table(TableReader& t, ConsensusConfig& config,
                          const topology::TopologySpec& topology) {
  using consensus::PolicyKind;
  consensus::ProtocolConfig& p = config.protocol;
  consensus::PolicySpec& policy = p.policy;
  t.read_choice<PolicyKind>("policy", policy.kind, consensus::parse_policy_kind);
  t.read("backups", policy.backups, 0, 1'000'000);
  t.read("slack", policy.slack, 0.0);
  t.read("window", policy.window, 1, 1'000'000);
  t.read("gradient_window", policy.gradient_window, 1, 1'000'000);
  t.read("warmup", policy.warmup, 0, 1'000'000);
  t.read("smoothness", policy.smoothness, 1e-12);
  t.read("disagreement_ema", policy.disagreement_ema, 0.0, 0.999999);
  t.read("disagreement_every", policy.disagreement_every, 1, 1'000'000);
  t.read("gradient_stats_every", policy.gradient_stats_every, 1, 1'000'000);
  t.read("m_min", p.m_min, 0, 1'000'000);
  t.read_choice<consensus::UpdateOrder>("order", p.order, consensus::parse_update_order);
  t.read_choice<consensus::Renormalisation>("renormalisation", p.renormalisation,
                                            consensus::parse_renormalisation);
  t.read("staleness", p.staleness, 0, 1'000'000);
  t.read("max_gap", p.max_gap, 0, 1'000'000);
  t.read("keep_connected", p.keep_connected);
  t.read("push_sum", p.push_sum);
  t.read_choice<std::string>("aggregation", p.aggregation, consensus::parse_aggregation);
  t.read("faulty_neighbours", p.faulty_neighbours, 0, 1'000'000);
  t.read("clipping_radius", p.clipping_radius, 0.0);
  t.read("local_steps", p.local_steps, 1, 1'000'000);
  t.read("validate", p.validate);
  t.read_choice<consensus::ValidationScore>("validation_score", p.validation_score,
                                            consensus::parse_validation_score);
  // A validation copies its batch once per iteration: a data-set-sized batch would be a copy
  // of the data set every iteration.
  t.read("validation_batch", p.validation_batch, 1, 4096);
  t.read("validation_margin", p.validation_margin, 0.0);
  p.validation_penalty = consensus::default_validation_penalty(p.validation_score);
  t.read("validation_penalty", p.validation_penalty, 0.0);
  if (p.validate && p.order != consensus::UpdateOrder::kCombineThenAdapt) {
    t.errors().add(t.path_of("validate"),
                   "needs order = \"combine_then_adapt\": with adapt_then_combine the "
                   "neighbours' models have stepped and the own one has not");
  }
  if (p.local_steps > 1 && p.push_sum) {
    t.errors().add(t.path_of("local_steps"), "and push_sum exclude each other");
  }
  if (p.local_steps > 1 && p.max_gap > 0) {
    t.errors().add(t.path_of("local_steps"),
                   "and max_gap exclude each other: neighbours' tags advance by local_steps");
  }
  if (p.local_steps > 1 && p.staleness >= p.local_steps) {
    t.errors().add(t.path_of("local_steps"),
                   "needs staleness < local_steps: the model of the "
                   "previous gossip would count as fresh");
  }
  if (p.local_steps > 1 && policy.kind == PolicyKind::kAdPsgd) {
    t.errors().add(t.path_of("local_steps"), "and policy ad_psgd exclude each other");
  }
  if (topology.directed && !p.push_sum) {
    t.errors().add(t.path_of("push_sum"),
                   "a directed graph (topology.directed = true) needs push_sum = true: its "
                   "weights are column-stochastic, and plain averaging with them would not "
                   "keep the models' mean");
  }
  if (p.push_sum && topology.kind == topology::TopologyKind::kOnePeerExponential) {
    t.errors().add(t.path_of("push_sum"),
                   "needs a fixed graph; topology.kind = \"one_peer_exponential\" changes it "
                   "every round (and is doubly stochastic: plain averaging keeps the mean)");
  }
  if (p.keep_connected && topology.directed) {
    t.errors().add(t.path_of("keep_connected"),
                   "needs an undirected graph: a spanning tree awaited at both ends");
  }
  if (p.keep_connected && topology.kind == topology::TopologyKind::kOnePeerExponential) {
    t.errors().add(t.path_of("keep_connected"),
                   "needs a static graph; topology.kind = \"one_peer_exponential\" has one "
                   "in-neighbour per round (with m_min = 1, the default, every round waits for "
                   "it anyway)");
  }
  if (policy.kind == PolicyKind::kAdPsgd) check_ad_psgd(t, p, topology);
  if (t.has("silence_timeout_s")) {
    t.errors().add(t.path_of("silence_timeout_s"),
                   "is gone: a neighbour silent for cluster.peer_timeout_ms stops being awaited "
                   "(real peers; simulated peers do not fail)");
  }
  if (t.has("micro_batches")) {
    t.errors().add(t.path_of("micro_batches"),
                   "is gone: the adaptive policy's noise estimates now come from per-example "
                   "gradient norms of the one backward pass (docs/protocol.md §5.5.4)");
  }
  t.finish();
}

nlohmann::ordered_json consensus_table_json(const ConsensusConfig& config) {
  const consensus::ProtocolConfig& p = config.protocol;
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
          {"max_gap", p.max_gap},
          {"keep_connected", p.keep_connected},
          {"push_sum", p.push_sum},
          {"aggregation", p.aggregation},
          {"faulty_neighbours", p.faulty_neighbours},
          {"local_steps", p.local_steps},
          {"clipping_radius", p.clipping_radius},
          {"validate", p.validate},
          {"validation_score", consensus::to_string(p.validation_score)},
          {"validation_batch", p.validation_batch},
          {"validation_margin", p.validation_margin},
          {"validation_penalty", p.validation_penalty}};
}

}  // namespace fastk::node
