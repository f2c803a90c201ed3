// fastk sim CONFIG: every peer of a config in one process, in virtual time (node/sim/).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "node/calibration/calibration.h"
#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/config/experiment_config.h"
#include "node/report/plots.h"
#include "node/report/progress_line.h"
#include "node/sim/simulation.h"

namespace fastk::node {
namespace {

struct SimOptions {
  ConfigOptions config;
  int threads = 0;
  bool quiet = false;
  bool no_plots = false;
  std::string calibration;  // overrides [sim] calibration
};

void print_summary(const sim::SimulationResult& r, const std::filesystem::path& folder,
                   double wall_s) {
  std::printf("peers: %d  updates: %lld  virtual time: %.3f s  (wall %.2f s, %lld events)\n",
              r.peers, static_cast<long long>(r.totals.iterations), r.end_time_s, wall_s,
              static_cast<long long>(r.events));
  if (r.time_to_target_s) {
    std::printf("time to target: %.3f s (virtual)\n", *r.time_to_target_s);
  } else if (r.summary["target_accuracy"].get<double>() > 0 ||
             r.summary["target_loss"].get<double>() > 0) {
    std::printf("time to target: not reached\n");
  }
  std::printf("final mean model of %s: accuracy %.4f, loss %.4f, consensus distance %.4g\n",
              r.summary.value("mean_model_of", std::string("every peer")).c_str(),
              r.last.test_accuracy, r.last.test_loss, r.last.consensus_distance);
  // Local steps ([consensus] local_steps) await nobody: the counts are means over gossips.
  const bool local_steps = r.totals.gossips < r.totals.iterations;
  std::printf("per %s: awaited %.3f, used %.3f, backups %.3f; waiting %.3f s%s (%.1f%% of time)\n",
              local_steps ? "gossip iteration" : "iteration", r.totals.mean_awaited(),
              r.totals.mean_used(), r.totals.mean_backups(), r.totals.mean_wait_s(),
              local_steps ? " per iteration" : "", 100 * r.wait_fraction);
  if (r.totals.rejected > 0) {
    std::printf("validation left out %lld neighbour models\n",
                static_cast<long long>(r.totals.rejected));
  }
  std::printf("ended by: %s\n", r.end.c_str());
  if (!r.finished) std::printf("warning: the peers got stuck before any stop rule applied\n");
  std::printf("outputs: %s\n", folder.string().c_str());
  const std::size_t with_files = r.summary["per_peer"].size();
  if (with_files < static_cast<std::size_t>(r.peers)) {
    std::printf(
        "peer files (peers/, per_peer, peer_accuracy.csv): %zu of %d peers, evenly "
        "spaced (sim.peer_files)\n",
        with_files, r.peers);
  }
}

void run_sim(const SimOptions& o) {
  const ExperimentConfig c = load_config(o.config);
  sim::SimulationInputs in{c.run,       c.topology,   c.data,       c.model,
                           c.optimizer, c.consensus,  c.stragglers, c.sim,
                           c.cluster,   std::nullopt, c.overrides};
  if (o.threads > 0) in.sim.threads = o.threads;
  if (!o.calibration.empty()) in.sim.calibration = o.calibration;
  if (!in.sim.calibration.empty()) {
    in.calibration = calibration::read_calibration(in.sim.calibration);
  }
  const auto claim = claim_run_folder(o.config, c, "-sim");
  const std::filesystem::path& folder = claim->path();
  std::filesystem::copy_file(o.config.config, folder / "config.toml");
  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(std::cout, stdout_is_tty());
  sim::EvaluationObserver show;
  std::string last_line;
  if (!o.quiet) {
    show = [&](const metrics::Evaluation& e, const metrics::IterationTotals& t) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "sim t=%.2f s  iteration %.1f  accuracy %.4f  loss %.4f  consensus %.3g  "
                    "backups %.2f",
                    e.time_s, e.mean_iteration, e.test_accuracy, e.test_loss, e.consensus_distance,
                    t.mean_backups());
      last_line = line;
      if (progress.due()) progress.show(last_line);
    };
  }
  const sim::SimulationResult r = sim::simulate(in, folder, show);
  claim->keep();
  if (!o.quiet) progress.print(last_line);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_summary(r, folder, wall_s);
  if (!o.no_plots && !make_plots(folder)) throw plots_failed(folder);
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "Simulate every peer of a config in virtual time (real gradients, seeded delays)");
  add_config_options(cmd, options->config);
  cmd->add_option("--calibration", options->calibration,
                  "A `fastk calibrate` file: simulate that machine (its gradient, update and "
                  "message costs, its cores); overrides sim.calibration")
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", options->threads,
                  "gradient threads (overrides sim.threads; outputs do not depend on it)")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--quiet", options->quiet, "no progress lines");
  cmd->add_flag("--no-plots", options->no_plots, "skip the PNG plots");
  cmd->callback([options] { run_sim(*options); });
}

}  // namespace fastk::node
