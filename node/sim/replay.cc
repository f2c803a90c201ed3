#include "node/sim/replay.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "node/metrics/output_files.h"
#include "node/sim/trace_delays.h"
#include "topology/topology.h"

namespace fastk::node::sim {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kFinerEvaluation = 10;

// What the replay of the recorded policy did at one iteration, to compare with the record.
struct Replayed {
  int awaited = 0;
  std::vector<std::pair<int, std::int64_t>> used;  // neighbour, tag; ascending
  double update_s = 0;
};

SimulationInputs inputs_for(const RecordedRun& run, const consensus::PolicySpec& policy,
                            const ReplayOptions& options, ReplayTimes times) {
  const ExperimentConfig& c = run.config;
  SimulationInputs in{c.run,       c.topology,       c.data, c.model,   c.optimizer,
                      c.consensus, c.stragglers,     c.sim,  c.cluster, std::nullopt,
                      c.overrides, std::move(times), c.churn};
  in.consensus.protocol.policy = policy;
  in.run.stop_at_target = false;  // the record's iterations: every gradient time is known
  // A replay that takes ten times the record's time has stalled (a policy waiting for what no
  // trace can give it): it ends there, by duration, and says so, rather than evaluating on.
  constexpr double kStalled = 10;
  double record_end_s = 0;
  for (const auto& p : run.peers)
    record_end_s = std::max(record_end_s, p.iterations.back().update_s);
  in.run.duration_s = kStalled * record_end_s + 1.0;
  // The record evaluated at wall-clock instants; finer here, so that times to target differ
  // by more than the grid they are read on.
  in.run.eval_interval_s =
      options.eval_interval_s > 0
          ? options.eval_interval_s
          : c.run.evaluation_interval_s(kWallClockEvaluationInterval_s) / kFinerEvaluation;
  if (options.threads > 0) in.sim.threads = options.threads;
  in.sim.calibration.clear();
  in.sim.link_rate_mbit = 0;  // the record's arrivals hold what the links took
  in.sim.peer_files = std::max(in.sim.peer_files, static_cast<int>(run.peers.size()));
  return in;
}

std::string label_of(const consensus::PolicySpec& p, bool as_recorded) {
  if (as_recorded) return consensus::to_string(p.kind) + " (as recorded)";
  return "static, " + std::to_string(p.backups) + (p.backups == 1 ? " backup" : " backups");
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Iteration by iteration: the same awaited count and the same neighbours' models mixed.
Divergence compare(const RecordedRun& run, const std::vector<std::vector<Replayed>>& replayed) {
  Divergence d;
  for (std::size_t i = 0; i < run.peers.size(); ++i) {
    const auto& recorded = run.peers[i].iterations;
    for (std::size_t k = 0; k < recorded.size(); ++k) {
      ++d.compared;
      const RecordedIteration& r = recorded[k];
      const Replayed* p = k < replayed[i].size() ? &replayed[i][k] : nullptr;
      if (p && p->awaited == r.awaited && p->used == r.used) {
        ++d.matching;
        continue;
      }
      if (d.first && d.first->recorded_s <= r.update_s) continue;
      d.first = Divergence::First{static_cast<int>(i),
                                  static_cast<std::int64_t>(k),
                                  r.update_s,
                                  r.awaited,
                                  p ? p->awaited : -1,
                                  r.used,
                                  p ? p->used : std::vector<std::pair<int, std::int64_t>>{}};
    }
  }
  std::vector<double> errors;
  for (std::size_t i = 0; i < run.peers.size(); ++i) {
    const auto& recorded = run.peers[i].iterations;
    for (std::size_t k = 0; k < recorded.size() && k < replayed[i].size(); ++k) {
      if (d.first && recorded[k].update_s >= d.first->recorded_s) continue;
      errors.push_back(std::abs(replayed[i][k].update_s - recorded[k].update_s));
    }
  }
  if (!errors.empty()) d.max_time_error_s = *std::max_element(errors.begin(), errors.end());
  d.median_time_error_s = median(std::move(errors));
  return d;
}

std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int identical_final_models(const RecordedRun& run, const std::filesystem::path& replayed) {
  int same = 0;
  for (std::size_t i = 0; i < run.peers.size(); ++i) {
    const auto name = std::filesystem::path("model-final.f32");
    const auto a = file_bytes(metrics::peer_folder(run.folder, static_cast<int>(i)) / name);
    const auto b = file_bytes(metrics::peer_folder(replayed, static_cast<int>(i)) / name);
    same += !a.empty() && a == b ? 1 : 0;
  }
  return same;
}

ReplayedPolicy run_policy(const RecordedRun& run, const consensus::PolicySpec& policy,
                          bool as_recorded, const ReplayOptions& options,
                          const std::filesystem::path& folder, const RecordObserver& on_record,
                          std::pair<std::int64_t, std::int64_t>& unrecorded) {
  TraceDelays trace(run, as_recorded);
  std::vector<double> start_s;
  for (const auto& p : run.peers) start_s.push_back(p.began_s);
  const SimulationInputs in = inputs_for(run, policy, options, ReplayTimes{&trace, start_s});
  std::filesystem::create_directories(folder);
  const SimulationResult r = simulate(in, folder, {}, on_record);
  if (as_recorded) unrecorded = {trace.without_arrival(), trace.superseded()};
  ReplayedPolicy out;
  out.label = label_of(policy, as_recorded);
  out.policy = policy;
  out.as_recorded = as_recorded;
  out.time_to_target_s = r.time_to_target_s;
  out.end_s = r.end_time_s;
  out.final_accuracy = r.last.test_accuracy;
  out.mean_backups = r.totals.mean_backups();
  out.end = r.end;
  out.folder = folder;
  return out;
}

Json to_json(const ReplayReport& report, const RecordedRun& run) {
  Json j;
  j["record"] = run.folder.string();
  j["peers"] = report.peers;
  j["compared_iterations"] = report.divergence.compared;
  j["matching_iterations"] = report.divergence.matching;
  j["max_time_error_s"] = report.divergence.max_time_error_s;
  j["median_time_error_s"] = report.divergence.median_time_error_s;
  if (const auto& f = report.divergence.first) {
    j["first_divergence"] = {{"peer", f->peer},
                             {"iteration", f->iteration},
                             {"recorded_s", f->recorded_s},
                             {"recorded_awaited", f->recorded_awaited},
                             {"replayed_awaited", f->replayed_awaited},
                             {"recorded_used", f->recorded_used},
                             {"replayed_used", f->replayed_used}};
  }
  j["identical_final_models"] = report.identical_final_models;
  j["messages_without_arrival"] = report.messages_without_arrival;
  j["messages_superseded"] = report.messages_superseded;
  j["target_accuracy"] = report.target_accuracy;
  j["record_time_to_target_s"] = run.time_to_target_s ? Json(*run.time_to_target_s) : Json();
  for (const auto& p : report.policies) {
    j["policies"].push_back(
        {{"label", p.label},
         {"policy", consensus::to_string(p.policy.kind)},
         {"backups", p.policy.backups},
         {"as_recorded", p.as_recorded},
         {"time_to_target_s", p.time_to_target_s ? Json(*p.time_to_target_s) : Json()},
         {"end_s", p.end_s},
         {"final_accuracy", p.final_accuracy},
         {"mean_backups", p.mean_backups},
         {"end", p.end},
         {"folder", p.folder.filename().string()}});
  }
  if (report.best_static) {
    const auto& best = report.policies[*report.best_static];
    j["best_static"] = best.label;
    const auto& mine = report.policies.front().time_to_target_s;
    if (mine) j["regret_s"] = *mine - *best.time_to_target_s;
  }
  return j;
}

}  // namespace

ReplayReport replay(const RecordedRun& run, const std::filesystem::path& folder,
                    const ReplayOptions& options) {
  ReplayReport report;
  report.peers = static_cast<int>(run.peers.size());
  report.target_accuracy = run.config.run.target_accuracy;
  std::vector<std::vector<Replayed>> replayed(run.peers.size());
  const RecordObserver keep = [&](const consensus::IterationRecord& r) {
    std::vector<std::pair<int, std::int64_t>> used;
    for (std::size_t j = 0; j < r.used.size(); ++j) used.emplace_back(r.used[j], r.used_tags[j]);
    std::sort(used.begin(), used.end());
    auto& mine = replayed[static_cast<std::size_t>(r.peer)];
    if (r.iteration == static_cast<std::int64_t>(mine.size())) {
      mine.push_back({r.awaited, std::move(used), r.update_s});
    }
  };
  const consensus::PolicySpec recorded = run.config.consensus.protocol.policy;
  std::pair<std::int64_t, std::int64_t> unrecorded;
  report.policies.push_back(
      run_policy(run, recorded, true, options, folder / "as-recorded", keep, unrecorded));
  report.messages_without_arrival = unrecorded.first;
  report.messages_superseded = unrecorded.second;
  if (options.on_policy_done) options.on_policy_done(report.policies.back());
  report.divergence = compare(run, replayed);
  report.identical_final_models = identical_final_models(run, folder / "as-recorded");
  const int max_degree = topology::build_topology(run.config.topology).graph.max_degree();
  for (int b = 0; options.static_policies && b < max_degree; ++b) {
    consensus::PolicySpec s;
    s.kind = consensus::PolicyKind::kStatic;
    s.backups = b;
    std::pair<std::int64_t, std::int64_t> unused;
    report.policies.push_back(
        run_policy(run, s, false, options, folder / ("static-b" + std::to_string(b)), {}, unused));
    if (options.on_policy_done) options.on_policy_done(report.policies.back());
  }
  for (std::size_t i = 1; i < report.policies.size(); ++i) {
    const auto& t = report.policies[i].time_to_target_s;
    if (!t) continue;
    if (!report.best_static || *t < *report.policies[*report.best_static].time_to_target_s) {
      report.best_static = i;
    }
  }
  metrics::write_json_file(folder / "replay.json", to_json(report, run));
  return report;
}

}  // namespace fastk::node::sim
