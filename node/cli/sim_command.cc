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
#include "node/sim/replay.h"
#include "node/sim/simulation.h"

namespace fastk::node {
namespace {

struct SimOptions {
  ConfigOptions config;
  int threads = 0;
  bool quiet = false;
  bool no_plots = false;
  std::string calibration;  // overrides [sim] calibration
  std::string replay;       // a `fastk run` folder to re-enact (node/sim/replay.h)
  double eval_interval_s = 0;
  bool no_static = false;
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
  sim::SimulationInputs in{c.run,       c.topology,   c.data, c.model,   c.optimizer,
                           c.consensus, c.stragglers, c.sim,  c.cluster, std::nullopt,
                           c.overrides, std::nullopt, c.churn};
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

std::string seconds(const std::optional<double>& t) {
  char text[32];
  if (!t) return "not reached";
  std::snprintf(text, sizeof text, "%.3f s", *t);
  return text;
}

void print_divergence(const sim::ReplayReport& r) {
  const sim::Divergence& d = r.divergence;
  std::printf(
      "replay of the record: the same decisions in %lld of %lld iterations (%.1f%%)",
      static_cast<long long>(d.matching), static_cast<long long>(d.compared),
      d.compared ? 100.0 * static_cast<double>(d.matching) / static_cast<double>(d.compared) : 0.0);
  std::printf("; update times within %.1f us of the record's (median %.1f us)%s\n",
              1e6 * d.max_time_error_s, 1e6 * d.median_time_error_s,
              d.first ? " until it parts" : "");
  if (const auto& f = d.first) {
    const auto set = [](const std::vector<std::pair<int, std::int64_t>>& v) {
      std::string s = "{";
      for (std::size_t i = 0; i < v.size(); ++i) {
        s +=
            (i ? ", " : "") + std::to_string(v[i].first) + " of tag " + std::to_string(v[i].second);
      }
      return s + "}";
    };
    std::printf(
        "first divergence at %.6f s: peer %d, iteration %lld: the record awaited %d and mixed "
        "%s, the replay awaited %d and mixed %s\n",
        f->recorded_s, f->peer, static_cast<long long>(f->iteration), f->recorded_awaited,
        set(f->recorded_used).c_str(), f->replayed_awaited, set(f->replayed_used).c_str());
  }
  std::printf("final models identical to the record's: %d of %d peers\n", r.identical_final_models,
              r.peers);
  if (r.messages_superseded + r.messages_without_arrival > 0) {
    std::printf(
        "messages the record never delivered: %lld superseded in their sender's queue (dropped), "
        "%lld after their receiver's last update\n",
        static_cast<long long>(r.messages_superseded),
        static_cast<long long>(r.messages_without_arrival));
  }
}

void print_regret(const sim::ReplayReport& r, const sim::RecordedRun& run) {
  std::printf("time to %.1f%% accuracy on the record's times:\n", 100 * r.target_accuracy);
  std::printf("  %-28s %s (from when the last peer began)\n", "the record (real peers)",
              seconds(run.time_to_target_s).c_str());
  for (std::size_t i = 0; i < r.policies.size(); ++i) {
    const auto& p = r.policies[i];
    std::printf("  %-28s %s%s\n", p.label.c_str(), seconds(p.time_to_target_s).c_str(),
                r.best_static == i ? "   <- best static in hindsight" : "");
  }
  const auto& mine = r.policies.front().time_to_target_s;
  if (!r.best_static || !mine || !(*r.policies[*r.best_static].time_to_target_s > 0)) {
    std::printf("regret: none to report (%s)\n",
                !mine                   ? "the recorded policy did not reach the target"
                : r.policies.size() < 2 ? "no static policy replayed"
                                        : "no static policy reached the target");
    return;
  }
  const auto& best = r.policies[*r.best_static];
  std::printf("regret of %s: %+.3f s (%+.1f%%) against %s\n",
              consensus::to_string(r.policies.front().policy.kind).c_str(),
              *mine - *best.time_to_target_s, 100 * (*mine / *best.time_to_target_s - 1),
              best.label.c_str());
}

void run_replay(const SimOptions& o) {
  if (!o.calibration.empty()) {
    throw CLI::ValidationError("--calibration", "a replay charges the record's times");
  }
  if (o.config.config.empty() && !o.config.overrides.empty()) {
    throw CLI::ValidationError("--set", "with --replay, the run's own config is replayed");
  }
  const sim::RecordedRun run = sim::read_recorded_run(o.replay);
  if (!o.config.config.empty()) sim::check_same_config(run, load_config(o.config));
  // "runs/x/", "." and ".." have no name of their own.
  const std::filesystem::path record = std::filesystem::weakly_canonical(o.replay);
  ClaimedRunFolder claim(
      o.config.output, record.parent_path() / (record.filename().string() + "-replay"), std::cout);
  const std::filesystem::path& folder = claim.path();
  std::printf("fastk sim --replay %s: %zu peers, %lld iterations, policy %s; %lld messages\n",
              record.string().c_str(), run.peers.size(),
              static_cast<long long>(run.config.run.iterations),
              consensus::to_string(run.config.consensus.protocol.policy.kind).c_str(),
              static_cast<long long>(run.messages));
  sim::ReplayOptions options;
  options.threads = o.threads;
  options.eval_interval_s = o.eval_interval_s;
  options.static_policies = !o.no_static;
  if (!o.quiet) {
    options.on_policy_done = [](const sim::ReplayedPolicy& p) {
      std::printf(
          "  replayed %-28s time to target %s, final accuracy %.4f%s\n", p.label.c_str(),
          seconds(p.time_to_target_s).c_str(), p.final_accuracy,
          p.end == "iterations" ? "" : " (stalled: stopped at ten times the record's time)");
      std::fflush(stdout);
    };
  }
  const sim::ReplayReport r = sim::replay(run, folder, options);
  claim.keep();
  print_divergence(r);
  if (r.target_accuracy > 0) print_regret(r, run);
  std::printf("outputs: %s (replay.json; a simulation's files per policy)\n",
              folder.string().c_str());
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
  cmd->add_option("--replay", options->replay,
                  "A `fastk run` folder: re-enact that run on its recorded times, say where the "
                  "replay parts from the record, and replay every static number of backups on "
                  "the same times (the regret of the recorded policy); CONFIG is then optional "
                  "(given, it must be the run's)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option(
         "--eval-interval-s", options->eval_interval_s,
         "with --replay: evaluate the mean model this often (default: a tenth of the run's "
         "run.eval_interval_s)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-static", options->no_static,
                "with --replay: replay the recorded policy only");
  cmd->add_flag("--quiet", options->quiet, "no progress lines");
  cmd->add_flag("--no-plots", options->no_plots, "skip the PNG plots");
  cmd->get_option("config")->required(false);
  cmd->callback([options] {
    if (!options->replay.empty()) return run_replay(*options);
    if (options->eval_interval_s > 0 || options->no_static) {
      throw CLI::ValidationError("--eval-interval-s, --no-static", "are for --replay");
    }
    if (options->config.config.empty()) {
      throw CLI::RequiredError("CONFIG (or --replay RUN_DIR)");
    }
    run_sim(*options);
  });
}

}  // namespace fastk::node
