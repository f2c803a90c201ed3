// fastk sim CONFIG: every peer of a config in one process, in virtual time (node/sim/).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "node/cli/commands.h"
#include "node/config/experiment_config.h"
#include "node/report/progress_line.h"
#include "node/sim/simulation.h"

namespace fastk::node {
namespace {

struct SimOptions {
  std::string config;
  int threads = 0;
  bool quiet = false;
};

void print_summary(const sim::SimulationResult& r, const std::filesystem::path& folder,
                   double wall_s) {
  std::printf("peers: %d  updates: %lld  virtual time: %.3f s  (wall %.2f s, %lld events)\n",
              r.peers, static_cast<long long>(r.totals.iterations), r.end_time_s, wall_s,
              static_cast<long long>(r.events));
  if (r.time_to_target_s) {
    std::printf("time to target: %.3f s (virtual)\n", *r.time_to_target_s);
  } else {
    std::printf("time to target: not reached\n");
  }
  std::printf("final mean model: accuracy %.4f, loss %.4f, consensus distance %.4g\n",
              r.last.test_accuracy, r.last.test_loss, r.last.consensus_distance);
  std::printf("mean b: %.3f  mean m: %.3f  waiting: %.3f s per iteration (%.1f%% of time)\n",
              r.totals.mean_backups(), r.totals.mean_awaited(), r.totals.mean_wait_s(),
              100 * r.wait_fraction);
  if (!r.finished) std::printf("warning: not every peer finished its iterations\n");
  std::printf("outputs: %s\n", folder.string().c_str());
}

void run_sim(const SimOptions& o) {
  const ExperimentConfig c = load_config(o.config);
  sim::SimulationInputs in{c.run,       c.topology,  c.data,       c.model,
                           c.optimizer, c.consensus, c.stragglers, c.sim};
  if (o.threads > 0) in.sim.threads = o.threads;
  const std::filesystem::path folder = std::filesystem::path(c.run.output) / c.run.name;
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(o.config, folder / "config.toml",
                             std::filesystem::copy_options::overwrite_existing);
  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(std::cout, stdout_is_tty());
  sim::EvaluationObserver show;
  std::string last_line;
  if (!o.quiet) {
    show = [&](const metrics::Evaluation& e, const metrics::IterationTotals& t) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "sim t=%.2f s  iteration %.1f  accuracy %.4f  loss %.4f  consensus %.3g  "
                    "mean b %.2f",
                    e.time_s, e.mean_iteration, e.test_accuracy, e.test_loss, e.consensus_distance,
                    t.mean_backups());
      last_line = line;
      if (progress.due()) progress.show(last_line);
    };
  }
  const sim::SimulationResult r = sim::simulate(in, folder, show);
  if (!o.quiet) progress.print(last_line);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_summary(r, folder, wall_s);
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "Simulate every peer of a config in virtual time (real gradients, seeded delays)");
  cmd->add_option("config", options->config, "experiment config (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", options->threads,
                  "gradient threads (overrides sim.threads; outputs do not depend on it)")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--quiet", options->quiet, "no progress lines");
  cmd->callback([options] { run_sim(*options); });
}

}  // namespace fastk::node
