// fastk report RUN_DIR: what `fastk run` builds at the end (node/report/run_results.h), from
// the peer folders of any launch: mpirun, srun, peers started by hand, folders fetched from
// other hosts.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/config/resolved_config.h"
#include "node/launch/run_folder_lock.h"
#include "node/launch/wall_clock.h"
#include "node/metrics/output_files.h"
#include "node/report/run_results.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

struct ReportOptions {
  std::string run_dir;
  // The config the peers ran, as they read it: its relative paths (data.dir, topology files)
  // are relative to its own folder, so a copy elsewhere would not do.
  std::string config;
  std::vector<std::string> overrides;
  bool no_plots = false;
};

// Says which peers left nothing or stopped early; returns how many left a summary.
int check_peers(const std::filesystem::path& run_dir, int n) {
  int reported = 0;
  for (int i = 0; i < n; ++i) {
    const auto folder = metrics::peer_folder(run_dir, i);
    const auto summary = read_summary(run_dir, i);
    if (!std::filesystem::exists(folder)) {
      std::cout << "fastk report: peer " << i << " has no folder (" << folder.string()
                << "): not started, or not copied here; reporting on the others\n";
    } else if (summary.is_discarded()) {
      std::cout << "fastk report: peer " << i
                << " left no readable summary.json (it failed, or is still running); reporting "
                   "on the others\n";
    } else {
      ++reported;
      if (!summary.value("finished", false)) {
        std::cout << "fastk report: peer " << i << " stopped after "
                  << summary.value("iterations", std::int64_t{0}) << " iterations ("
                  << summary.value("end", std::string("?")) << ")\n";
      }
    }
  }
  return reported;
}

// Whether some peer saved model snapshots (fastk run --keep-snapshots): kept then. Peers
// started without fastk run leave only an empty index, removed like fastk run removes it.
bool any_snapshots(const std::filesystem::path& run_dir, int n) {
  for (int i = 0; i < n; ++i) {
    const auto folder = metrics::peer_folder(run_dir, i);
    if (!std::filesystem::is_directory(folder)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (entry.path().filename().string().starts_with("model-t")) return true;
    }
  }
  return false;
}

// The config and overrides the peers ran, from the first peer folder's launch.json.
ConfigOptions config_of_peers(const std::filesystem::path& run_dir) {
  const std::filesystem::path peers = run_dir / "peers";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(peers)) {
    const auto file = entry.path() / metrics::kPeerLaunchFile;
    if (std::filesystem::is_regular_file(file)) files.push_back(file);
  }
  if (files.empty()) {
    throw std::runtime_error("no peer folder of " + run_dir.string() + " names its config (" +
                             metrics::kPeerLaunchFile +
                             ", which fastk node writes): give --config");
  }
  std::sort(files.begin(), files.end());
  std::ifstream in(files.front());
  const auto launch = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (launch.is_discarded() || !launch.contains("config") || !launch["config"].is_string() ||
      !launch.contains("overrides") || !launch["overrides"].is_array()) {
    throw std::runtime_error(files.front().string() +
                             " is not a launch record ({\"config\": ..., \"overrides\": "
                             "[...]}): give --config");
  }
  ConfigOptions options;
  options.config = launch["config"].get<std::string>();
  for (const auto& value : launch["overrides"]) {
    if (!value.is_string()) {
      throw std::runtime_error(files.front().string() + ": an override is not a string");
    }
    options.overrides.push_back(value.get<std::string>());
  }
  if (!std::filesystem::is_regular_file(options.config)) {
    throw std::runtime_error("the peers of " + run_dir.string() + " ran " + options.config +
                             ", which is not there now: give --config");
  }
  std::cout << "fastk report: config " << options.config << " (from " << files.front().string()
            << ")\n";
  return options;
}

// Every peer left a summary and finished its run.
bool complete(const std::filesystem::path& run_dir, int n) {
  for (int i = 0; i < n; ++i) {
    const auto summary = read_summary(run_dir, i);
    if (summary.is_discarded() || !summary.value("finished", false)) return false;
  }
  return true;
}

int report(const ReportOptions& o) {
  const std::filesystem::path run_dir = std::filesystem::absolute(o.run_dir);
  if (!std::filesystem::is_directory(run_dir / "peers")) {
    throw std::runtime_error(run_dir.string() +
                             " has no peers/ folder: not a run folder (peers write to "
                             "run.output/run.name/peers/peer-<i>/)");
  }
  const RunFolderLock lock(run_dir);  // not while a launch still writes it
  if (std::filesystem::exists(run_dir / "summary.json")) {
    // fastk run's folder holds the evaluations it made of the mean model while the peers ran,
    // which a report cannot make again: it is not rebuilt behind the user's back.
    throw std::runtime_error(run_dir.string() +
                             " is reported already (summary.json); to report it again (say, "
                             "once a missing peer's folder is there), remove its summary.json");
  }
  const ConfigOptions ran =
      o.config.empty() ? config_of_peers(run_dir) : ConfigOptions{o.config, o.overrides, ""};
  const std::filesystem::path config_path = ran.config;
  const ExperimentConfig config = load_config(ran);
  const auto topology = topology::build_topology(config.topology);
  const int n = topology.graph.size();
  if (check_peers(run_dir, n) == 0) {
    throw std::runtime_error("no peer of " + run_dir.string() + " left a summary.json");
  }
  std::filesystem::copy_file(config_path, run_dir / "config.toml",
                             std::filesystem::copy_options::overwrite_existing);
  const double interval_s = config.run.evaluation_interval_s(kWallClockEvaluationInterval_s);
  metrics::write_json_file(run_dir / "resolved_config.json",
                           resolved_config(config, topology, interval_s));
  // Snapshots are timed from the epoch only `fastk run` gives its peers: the mean model is
  // evaluated on the final models.
  MeanModelEvaluator evaluator(config, run_dir, n, 0.0, interval_s);
  metrics::RunSummary launcher;
  launcher.ok = complete(run_dir, n);
  const auto summary = write_run_results({.config = config,
                                          .run_dir = run_dir,
                                          .peers = n,
                                          .evaluator = evaluator,
                                          .live_evaluations = {},
                                          .launcher = launcher,
                                          .launch_started = std::nullopt,  // not watched
                                          .evaluate_snapshots = false,
                                          .keep_snapshots = any_snapshots(run_dir, n),
                                          .keep_peer_csv = true,
                                          .plots = !o.no_plots});
  return launcher.ok ? 0 : 1;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Build a run's results (evaluation, merged CSVs, summary, plots) from its peers");
  cmd->footer(
      "For runs started by mpirun, srun or by hand (fastk run does this itself): evaluates\n"
      "the mean of the peers' final models, merges their iterations.csv, writes\n"
      "summary.json, peer_accuracy.csv and resolved_config.json, prints the table and draws\n"
      "the plots, as fastk run does at its end. Peers that left no folder or no summary are\n"
      "named and left out (their iterations.csv stay in their folders, so the report can be\n"
      "made again once the missing ones are there: remove summary.json first). Exit code 1\n"
      "when a peer is missing or did not finish.");
  cmd->add_option("RUN_DIR", options->run_dir,
                  "The run folder: run.output/run.name, holding peers/peer-<i>/")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--config", options->config,
                  "The config the peers ran (where they read it: its relative paths count from "
                  "its folder); default: the one their folders name (peers/peer-*/launch.json)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", options->overrides,
                  "table.key=value, as given to the launch (repeatable; only with --config: "
                  "without it, the peers' own overrides apply)")
      ->needs("--config");
  cmd->add_flag("--no-plots", options->no_plots, "Skip the PNG plots");
  cmd->callback([options] {
    const int code = report(*options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fastk::node
