// fastk sweep CONFIG --vary KEY=V1,V2 ...: every combination of the varied keys as its own
// `fastk sim` (or `fastk run`) with --set, then one CSV of all evaluations, the time to the
// target accuracy of each setting over the seeds, and plots with the spread over seeds
// (docs/reproduction.md uses it for its figures).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/config/sweep_plan.h"
#include "node/launch/child_process.h"
#include "node/metrics/file_writer.h"
#include "node/report/plots.h"
#include "node/report/sweep_results.h"

namespace fastk::node {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  ConfigOptions config;  // --set applies to every run; --output is the sweep's folder
  std::vector<std::string> vary;
  std::string runtime = "sim";
  std::string over = "run.seed";
  bool keep_going = false;
  bool no_plots = false;
};

// Ctrl-C, SIGTERM, SIGHUP: the first stops the current run (SIGINT to it) and the sweep;
// another kills the run at once.
std::atomic<int> g_signals{0};
void on_signal(int) { g_signals.fetch_add(1); }
bool interrupted() { return g_signals.load() > 0; }

// Installs on_signal for SIGINT, SIGTERM and SIGHUP, except where the signal is ignored (as
// SIGHUP under nohup), and puts the previous handlers back when `on` is false.
void catch_signals(bool on) {
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  static struct sigaction previous[3];
  for (int i = 0; i < 3; ++i) {
    if (on) {
      sigaction(kSignals[i], nullptr, &previous[i]);
      if (previous[i].sa_handler == SIG_IGN) continue;
      struct sigaction action {};
      action.sa_handler = on_signal;
      sigaction(kSignals[i], &action, nullptr);
    } else {
      sigaction(kSignals[i], &previous[i], nullptr);
    }
  }
}

// Every point's config, loaded before anything runs: a bad value fails the sweep at once,
// naming its run.
std::vector<ExperimentConfig> check_points(const SweepOptions& o,
                                           const std::vector<SweepPoint>& points) {
  std::vector<ExperimentConfig> configs;
  for (const SweepPoint& p : points) {
    ConfigOptions point = o.config;
    for (const std::string& s : p.overrides()) point.overrides.push_back(s);
    try {
      configs.push_back(load_config(point));
    } catch (const std::exception& e) {
      throw std::runtime_error("sweep run " + p.folder + ": " + e.what());
    }
  }
  return configs;
}

void write_plan(const fs::path& dir, const SweepOptions& o, const std::vector<Variation>& vary,
                const std::vector<SweepPoint>& points, double target) {
  nlohmann::ordered_json plan;
  plan["config"] = fs::absolute(o.config.config).string();
  plan["set"] = o.config.overrides;
  plan["runtime"] = o.runtime;
  plan["over"] = o.over;
  // 0 when the sweep varies it: each setting's is in time_to_target.csv.
  plan["target_accuracy"] = target > 0 ? nlohmann::ordered_json(target) : nullptr;
  for (const Variation& v : vary) plan["vary"].push_back({{"key", v.key}, {"values", v.values}});
  for (const SweepPoint& p : points) {
    nlohmann::ordered_json run{{"folder", p.folder}};
    for (const auto& [key, value] : p.settings) run["settings"][key] = value;
    plan["runs"].push_back(run);
  }
  metrics::FileWriter file(dir / "sweep.json", metrics::FileWriter::Mode::kAtomic);
  file.write(plan.dump(2) + "\n");
  file.commit();
}

// One run as a child `fastk sim|run`, its output in runs/<folder>.log. False if it failed
// (the log's last lines are shown).
bool run_point(const SweepOptions& o, const SweepPoint& p, const fs::path& dir) {
  std::error_code no_exe;
  const fs::path exe = fs::read_symlink("/proc/self/exe", no_exe);
  std::vector<std::string> argv{exe.empty() ? "fastk" : exe.string(),
                                o.runtime == "sim" ? "sim" : "run", o.config.config};
  std::vector<std::string> sets = o.config.overrides;
  for (const std::string& s : p.overrides()) sets.push_back(s);
  for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), {"--output", (dir / "runs" / p.folder).string(), "--no-plots"});
  if (o.runtime == "sim") argv.push_back("--quiet");
  const fs::path log_path = dir / "runs" / (p.folder + ".log");
  std::ofstream log(log_path);
  std::deque<std::string> tail;
  ChildProcess child(argv);
  bool killed = false;
  const ExitStatus status = child.wait(
      [&](const std::string& line) {
        log << line << '\n';
        tail.push_back(line);
        if (tail.size() > 8) tail.pop_front();
      },
      [&] {
        if (g_signals.load() > 1 && !killed) {
          child.send_signal(SIGKILL);
          killed = true;
        }
        return interrupted();
      });
  log.flush();
  if (status.ok() && log) return true;
  std::cerr << "  failed (" << status.describe() << "); the end of " << log_path.string() << ":\n";
  for (const std::string& line : tail) std::cerr << "    " << line << "\n";
  return false;
}

void print_outcome(const fs::path& run, double wall_s, const std::string& unit) {
  nlohmann::json s;
  try {
    std::ifstream in(run / "summary.json");
    s = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    std::printf("  done in %.1f s (no summary.json)\n", wall_s);
    return;
  }
  const auto number = [&](const char* key) {
    return s.value(key, nlohmann::json()).is_number() ? s[key].get<double>() : -1.0;
  };
  std::printf("  accuracy %.4f at %.2f %s", number("final_test_accuracy"), number("final_time_s"),
              unit.c_str());
  if (number("time_to_target_s") >= 0) {
    std::printf(", target at %.2f %s", number("time_to_target_s"), unit.c_str());
  }
  std::printf(" (took %.1f s)\n", wall_s);
}

int run_sweep(const SweepOptions& o) {
  std::vector<Variation> variations;
  for (const std::string& text : o.vary) variations.push_back(parse_variation(text));
  const std::vector<SweepPoint> points = sweep_points(variations);
  const std::vector<ExperimentConfig> configs = check_points(o, points);
  // The first point's config names the folder: the file alone may be valid only with the
  // varied values.
  const ExperimentConfig& first = configs.front();
  const auto claim = claim_run_folder(o.config, first, "-sweep");
  const fs::path& dir = claim->path();
  fs::create_directories(dir / "runs");
  double target = first.run.target_accuracy;
  for (const ExperimentConfig& c : configs) {
    if (c.run.target_accuracy != target) target = 0;  // varied: each setting has its own
  }
  write_plan(dir, o, variations, points, target);
  const std::string unit = o.runtime == "sim" ? "virtual s" : "s";

  claim->keep();  // the runs' logs say what happened, even when none finished
  catch_signals(true);
  std::vector<SweepPoint> done;
  int failed = 0;
  for (std::size_t i = 0; i < points.size() && !interrupted(); ++i) {
    std::printf("[%zu/%zu] %s:", i + 1, points.size(), o.runtime.c_str());
    for (const auto& [key, value] : points[i].settings) {
      std::printf(" %s=%s", key.c_str(), value.c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    if (!run_point(o, points[i], dir)) {
      ++failed;
      if (!o.keep_going || interrupted()) break;
      continue;
    }
    print_outcome(dir / "runs" / points[i].folder,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                  unit);
    done.push_back(points[i]);
  }
  catch_signals(false);
  if (done.empty()) {
    std::fprintf(stderr, "fastk sweep: %s before any run finished\n",
                 interrupted() ? "interrupted" : "failed");
    return interrupted() ? 130 : 1;
  }
  write_sweep_csv(dir, variations, done);
  const std::vector<SettingResult> results = sweep_settings(dir, done, o.over);
  write_time_to_target_csv(dir, results);
  std::printf("\n%s\n", time_to_target_table(results, target, unit).c_str());
  const bool plotted = o.no_plots || make_sweep_plots(dir);
  std::printf("outputs: %s (sweep.csv, time_to_target.csv%s)\n", dir.string().c_str(),
              o.no_plots || !plotted ? "" : ", sweep_accuracy.png");
  if (!plotted) throw plots_failed(dir);
  if (interrupted()) {
    std::fprintf(stderr, "fastk sweep: interrupted after %zu of %zu runs\n", done.size(),
                 points.size());
    return 130;
  }
  if (failed > 0 || done.size() < points.size()) {
    std::fprintf(stderr, "fastk sweep: %d run(s) failed; %zu of %zu finished\n", failed,
                 done.size(), points.size());
    return 1;
  }
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run every combination of some config keys' values, then compare them over seeds");
  cmd->footer(
      "Example: fastk sweep experiments/configs/sim_torus16.toml \\\n"
      "           --vary consensus.policy=full,static,adaptive --vary run.seed=1,2,3\n"
      "Each combination runs as `fastk sim` (or `fastk run` with --runtime real) with --set,\n"
      "in OUTPUT/runs/<NN_key-value_...>/ with its log beside it. Then OUTPUT holds\n"
      "sweep.json (the plan), sweep.csv (every run's evaluation.csv rows with the varied\n"
      "keys' values in front), time_to_target.csv (per setting, over the --over key: mean,\n"
      "min and max time to run.target_accuracy and final accuracy) and sweep_accuracy.png\n"
      "(mean-model accuracy against time, mean and min-max band over seeds).\n"
      "Every run's config is checked before the first starts; a failed run stops the sweep\n"
      "unless --keep-going. Ctrl-C stops the current run and writes what finished.");
  add_config_options(cmd, options->config);
  cmd->get_option("--output")
      ->description("Sweep folder (default: <run.output>/<run.name>-sweep of the config)");
  cmd->add_option("--vary", options->vary,
                  "KEY=V1,V2,...: a config key and its values (repeatable; every combination "
                  "runs, the last --vary fastest)")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--runtime", options->runtime,
                  "sim: `fastk sim`, virtual time (default); real: `fastk run`, real peers")
      ->check(CLI::IsMember({"sim", "real"}));
  cmd->add_option("--over", options->over,
                  "The key results are averaged over (default run.seed): runs that differ only "
                  "in it form one setting");
  cmd->add_flag("--keep-going", options->keep_going, "Go on after a run fails (exit 1 at the end)");
  cmd->add_flag("--no-plots", options->no_plots, "Skip the PNG plot");
  cmd->callback([options] {
    const int code = run_sweep(*options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fastk::node
