#include "node/report/run_results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>

#include "node/launch/snapshots.h"
#include "node/metrics/output_files.h"
#include "node/report/plots.h"

namespace fastk::node {
namespace {

void print_table(const nlohmann::ordered_json& summary) {
  std::cout << "\n  peer  iterations  elapsed_s  waiting  awaited  used  backups  test_acc  "
               "peak_MiB\n";
  for (const auto& p : summary["per_peer"]) {
    if (!p.contains("iterations")) {
      std::cout << std::setw(6) << p["peer"].get<int>() << "  " << p["status"].get<std::string>()
                << "\n";
      continue;
    }
    const double elapsed = p["elapsed_s"].get<double>();
    // None when its final model could not be read (a peer that never trained).
    const auto& accuracy = p["test_accuracy"];
    char test[16] = "        -";
    if (accuracy.is_number())
      std::snprintf(test, sizeof test, "%8.2f%%", 100 * accuracy.get<double>());
    char line[200];
    std::snprintf(line, sizeof line, "%6d %11lld %10.2f %7.0f%% %8.2f %5.2f %8.2f %s %9.0f",
                  p["peer"].get<int>(), static_cast<long long>(p["iterations"].get<std::int64_t>()),
                  elapsed, elapsed > 0 ? 100 * p["waiting_s"].get<double>() / elapsed : 0.0,
                  p.value("mean_awaited", 0.0), p.value("mean_used", 0.0),
                  p.value("mean_backups", 0.0), test, p.value("peak_rss_mib", 0.0));
    std::cout << line << (p.value("attacker", false) ? "  attacker" : "") << "\n";
  }
}

void print_outcome(const nlohmann::ordered_json& summary,
                   const std::vector<metrics::Evaluation>& evaluations, const RunConfig& run) {
  print_table(summary);
  if (!evaluations.empty()) {
    const auto& e = evaluations.back();
    std::cout << "\nmean model of " << summary.value("mean_model_of", std::string("every peer"))
              << " after " << std::fixed << std::setprecision(2) << e.time_s << " s: test accuracy "
              << 100 * e.test_accuracy << "%, loss " << std::setprecision(4) << e.test_loss
              << ", consensus distance " << std::setprecision(3) << std::scientific
              << e.consensus_distance << "\n";
    std::cout.unsetf(std::ios::floatfield);
  }
  if (run.has_target()) {
    const auto& t = summary["time_to_target_s"];
    std::cout << "time to target (" << (run.target_accuracy > 0 ? "accuracy " : "loss ")
              << (run.target_accuracy > 0 ? run.target_accuracy : run.target_loss) << "): "
              << (t.is_null() ? std::string("not reached") : std::to_string(t.get<double>()) + " s")
              << "\n";
  }
  std::cout << "training phase " << std::setprecision(3)
            << summary["training_phase_s"].get<double>() << " s; awaited "
            << summary["mean_awaited"].get<double>() << ", used "
            << summary["mean_used"].get<double>() << ", backups "
            << summary["mean_backups"].get<double>()
            << (summary.value("gossip_updates", 0) < summary.value("updates", 0)
                    ? " per gossip iteration; waiting "
                    : " per iteration; waiting ")
            << 100 * summary["wait_fraction"].get<double>() << "% of the time";
  const auto& bytes = summary["bytes_per_iteration"];  // null without iterations
  if (!bytes.is_null()) {
    std::cout << "; " << static_cast<std::int64_t>(bytes.get<double>())
              << " bytes sent per peer-iteration";
  }
  std::cout << "\n";
  if (const auto rejected = summary.value("rejected_models", std::int64_t{0}); rejected > 0) {
    std::cout << "validation left out " << rejected << " neighbour models\n";
  }
}

struct RunEvaluations {
  std::vector<metrics::Evaluation> mean_model;    // evaluation.csv
  std::map<int, metrics::Evaluation> own_finals;  // of the peers that left theirs to us
};

// The mean model over the whole run, in time order and timed from the training start: the
// instants evaluated while the peers ran (`still_running`: an idle-time evaluation to stop
// and collect, once the rest are under way), the instants left, and the final models.
RunEvaluations evaluations_after_run(MeanModelEvaluator& evaluator,
                                     std::vector<metrics::Evaluation> live,
                                     IdleEvaluation* still_running, const PeerTimes& times,
                                     bool evaluate_snapshots) {
  if (still_running) still_running->wind_down();
  auto [rest, final_models, own_finals] =
      evaluator.evaluate_after_run(times.training_end_unix_s, evaluate_snapshots);
  if (still_running) {
    for (auto& e : still_running->stop()) live.push_back(std::move(e));
    own_finals = evaluator.peer_finals();  // with those the threads were still on
  }
  // Instants at or after the last update (evaluated while peers said goodbye) repeat the
  // final models: the final evaluation stands for them.
  std::erase_if(
      live, [&](const metrics::Evaluation& e) { return e.time_s >= times.training_end_unix_s; });
  for (auto& e : rest) live.push_back(std::move(e));
  std::sort(live.begin(), live.end(),
            [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
  if (final_models) live.push_back(std::move(*final_models));
  return {MeanModelEvaluator::with_times(std::move(live), times.training_start_unix_s),
          std::move(own_finals)};
}

// The test loss and accuracy of each peer's final model that the launcher evaluated (the
// peer's own summary.json has null there).
void add_own_finals(metrics::RunSummary& run, const std::map<int, metrics::Evaluation>& finals) {
  for (auto& p : run.per_peer) {
    const auto own = finals.find(p.value("peer", -1));
    if (own == finals.end() || !p.contains("test_accuracy") || !p["test_accuracy"].is_null()) {
      continue;
    }
    p["test_loss"] = own->second.test_loss;
    p["test_accuracy"] = own->second.test_accuracy;
  }
}

}  // namespace

nlohmann::ordered_json write_run_results(RunResultsInput in) {
  const ExperimentConfig& config = in.config;
  const std::filesystem::path& run_dir = in.run_dir;
  const int n = in.peers;
  const PeerTimes times = read_peer_times(run_dir, n);
  const auto [evaluations, own_finals] =
      evaluations_after_run(in.evaluator, std::move(in.live_evaluations), in.idle_evaluation, times,
                            in.evaluate_snapshots);
  if (!in.keep_snapshots) {
    for (int i = 0; i < n; ++i) remove_snapshots(metrics::peer_folder(run_dir, i));
  }
  {
    metrics::EvaluationCsv csv((run_dir / "evaluation.csv").string());
    for (const auto& e : evaluations) csv.write(e);
    csv.flush();  // a full disk throws here
  }
  merge_peer_csv(run_dir, "iterations.csv", n, in.keep_peer_csv);
  merge_peer_csv(run_dir, "neighbours.csv", n, in.keep_peer_csv);
  merge_peer_csv(run_dir, "arrivals.csv", n, in.keep_peer_csv);
  merge_peer_csv(run_dir, "timers.csv", n, in.keep_peer_csv);
  const double wall_s =
      in.launch_started
          ? std::chrono::duration<double>(std::chrono::steady_clock::now() - *in.launch_started)
                .count()
          : NAN;
  metrics::RunSummary run = summarize_run(run_dir, config, n, evaluations, wall_s);
  add_own_finals(run, own_finals);
  run.ok = in.launcher.ok;
  run.outputs_not_fetched = in.launcher.outputs_not_fetched;
  run.base_gradient_s = in.launcher.base_gradient_s;
  run.calibrated = in.launcher.calibrated;
  for (auto& p : run.per_peer) {  // how failed peers ended, where the launcher knows it
    const auto failure = in.launcher.peer_failures.find(p["peer"].get<int>());
    if (failure == in.launcher.peer_failures.end()) continue;
    p["failure"] = failure->second;
    if (!p.contains("iterations")) p["status"] = failure->second["status"];
  }
  const nlohmann::ordered_json summary = metrics::to_json(run);
  metrics::write_final_peer_accuracy(run_dir, run.last ? run.last->time_s : run.training_phase_s,
                                     summary["per_peer"]);
  metrics::write_json_file(run_dir / "summary.json", summary);
  print_outcome(summary, evaluations, config.run);
  const bool plotted = !in.plots || make_plots(run_dir);
  std::cout << "outputs in " << run_dir.string() << std::endl;
  if (!plotted) throw plots_failed(run_dir);  // exit code 1, not the run's own
  return summary;
}

}  // namespace fastk::node
