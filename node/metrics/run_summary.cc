#include "node/metrics/run_summary.h"

namespace fastk::node::metrics {
namespace {

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

void add_outcome(const RunSummary& s, nlohmann::ordered_json& j) {
  j["target_accuracy"] = s.target_accuracy;
  j["target_loss"] = s.target_loss;
  j["time_to_target_s"] = or_null(s.time_to_target_s);
  j["final_time_s"] = s.last ? nlohmann::ordered_json(s.last->time_s) : nullptr;
  j["final_test_accuracy"] = s.last ? nlohmann::ordered_json(s.last->test_accuracy) : nullptr;
  j["final_test_loss"] = s.last ? nlohmann::ordered_json(s.last->test_loss) : nullptr;
  j["final_consensus_distance"] =
      s.last ? nlohmann::ordered_json(s.last->consensus_distance) : nullptr;
  j["mean_awaited"] = s.totals.mean_awaited();
  j["mean_used"] = s.totals.mean_used();
  j["mean_backups"] = s.totals.mean_backups();
  j["mean_wait_s"] = s.totals.mean_wait_s();
  j["wait_fraction"] = s.wait_fraction;
  j["updates"] = s.totals.iterations;
  j["gossip_updates"] = s.totals.gossips;
  j["rejected_models"] = s.totals.rejected;
}

void add_traffic(const RunSummary& s, nlohmann::ordered_json& j) {
  j["messages"] = or_null(s.messages);
  j["dropped_messages"] = or_null(s.dropped_messages);
  j["rejected_frames"] = or_null(s.rejected_frames);
  j["events"] = or_null(s.events);
  j["bytes_sent"] = or_null(s.bytes_sent);
  j["bytes_per_iteration"] = s.bytes_sent && s.totals.iterations > 0
                                 ? nlohmann::ordered_json(static_cast<double>(*s.bytes_sent) /
                                                          static_cast<double>(s.totals.iterations))
                                 : nullptr;
  j["peak_rss_mib_total"] = s.peak_rss_mib_total;  // NaN is written as null
}

}  // namespace

RunSummary summary_of_config(const ExperimentConfig& config, int peers, std::string runtime) {
  RunSummary s;
  s.runtime = std::move(runtime);
  s.name = config.run.name;
  s.topology = topology::to_string(config.topology.kind);
  s.policy = consensus::to_string(config.consensus.protocol.policy.kind);
  s.peers = peers;
  s.iterations_per_peer = config.run.iterations;
  s.duration_s = config.run.duration_s;
  s.overrides = config.overrides;
  s.target_accuracy = config.run.target_accuracy;
  s.target_loss = config.run.target_loss;
  s.attack = config.consensus.protocol.attack;
  return s;
}

std::string what_the_mean_model_is(const std::optional<consensus::AttackSpec>& attack) {
  if (!attack) return "every peer";
  std::string ids;
  for (const int p : attack->peers) ids += (ids.empty() ? "" : ", ") + std::to_string(p);
  return "the honest peers (attackers " + ids + " left out)";
}

nlohmann::ordered_json to_json(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["runtime"] = s.runtime;
  j["name"] = s.name;
  j["topology"] = s.topology;
  j["policy"] = s.policy;
  j["peers"] = s.peers;
  j["iterations_per_peer"] = s.iterations_per_peer;
  j["duration_s"] = s.duration_s;
  j["overrides"] = s.overrides;
  j["calibrated"] = s.calibrated;
  j["ok"] = s.ok;
  j["finished"] = s.finished;
  j["end"] = s.end;
  j["training_phase_s"] = s.training_phase_s;
  j["wall_s"] = s.wall_s;
  j["base_gradient_s"] = s.base_gradient_s;
  add_outcome(s, j);
  add_traffic(s, j);
  j["peers_reported"] = s.peers_reported;
  j["outputs_not_fetched"] = s.outputs_not_fetched;
  j["mean_model_of"] = what_the_mean_model_is(s.attack);
  j["per_peer"] = s.per_peer;
  if (s.attack) {
    j["attack"] = {{"peers", s.attack->peers}, {"kind", consensus::to_string(s.attack->kind)}};
    for (auto& peer : j["per_peer"]) {
      if (peer.contains("peer") && s.attack->attacker(peer["peer"].get<int>())) {
        peer["attacker"] = true;
      }
    }
  }
  return j;
}

}  // namespace fastk::node::metrics
