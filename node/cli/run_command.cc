// fastk run CONFIG: every peer of the config as its own process, on this machine or on the
// [cluster] hosts over ssh; one live progress line; the run's outputs collected at the end.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>

#include "node/cli/commands.h"
#include "node/config/cluster.h"
#include "node/config/experiment_config.h"
#include "node/launch/launcher.h"
#include "node/launch/run_outputs.h"
#include "node/training/peer_trainer.h"
#include "node/transport/shared_models.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted = true; }

struct RunOptions {
  std::string config;
  std::int64_t eval_every = 0;
  bool no_plots = false;
  std::string remote_fastk;
};

bool is_local(const std::string& host) {
  return host == "localhost" || host.starts_with("127.") || host == "::1";
}

void print_table(const nlohmann::ordered_json& summary) {
  std::cout << "\n  peer  iterations  elapsed_s  waiting  mean_b  test_acc  peak_MiB\n";
  for (const auto& p : summary["per_peer"]) {
    if (!p.contains("iterations")) {
      std::cout << std::setw(6) << p["peer"].get<int>() << "  " << p["status"].get<std::string>()
                << "\n";
      continue;
    }
    const double elapsed = p["elapsed_s"].get<double>();
    std::cout << std::fixed << std::setw(6) << p["peer"].get<int>() << std::setw(12)
              << p["iterations"].get<std::int64_t>() << std::setw(11) << std::setprecision(2)
              << elapsed << std::setw(8) << std::setprecision(0)
              << (elapsed > 0 ? 100 * p["waiting_s"].get<double>() / elapsed : 0) << "%"
              << std::setw(8) << std::setprecision(2) << p["mean_backups"].get<double>()
              << std::setw(9) << std::setprecision(2) << 100 * p["test_accuracy"].get<double>()
              << "%" << std::setw(10) << std::setprecision(0) << p["peak_rss_mib"].get<double>()
              << "\n";
  }
  std::cout.unsetf(std::ios::floatfield);
}

int run(const RunOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  const std::filesystem::path config_path = std::filesystem::absolute(o.config);
  const ExperimentConfig config = load_config(config_path);
  training::check_optimizer(config.optimizer);  // before any peer starts
  const int n = topology::build_topology(config.topology).graph.size();
  const std::filesystem::path run_dir =
      std::filesystem::absolute(std::filesystem::path(config.run.output) / config.run.name);
  std::filesystem::remove_all(run_dir / "peers");  // results of an earlier run of this name
  std::filesystem::create_directories(run_dir);
  std::filesystem::copy_file(config_path, run_dir / "config.toml",
                             std::filesystem::copy_options::overwrite_existing);

  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::int64_t eval_every =
      o.eval_every > 0 ? o.eval_every : std::max<std::int64_t>(1, config.run.iterations / 10);
  std::vector<PeerLaunch> peers;
  std::set<std::string> remote_hosts;
  for (int i = 0; i < n; ++i) {
    const auto endpoint = parse_tcp_endpoint(peer_endpoints(config.cluster, n, i).connect);
    PeerLaunch p;
    p.peer = i;
    p.host = endpoint && !is_local(endpoint->host) ? endpoint->host : "";
    p.argv = {p.host.empty() || o.remote_fastk.empty() ? self : o.remote_fastk,
              "node",
              config_path.string(),
              "--id",
              std::to_string(i),
              "--output",
              run_dir.string(),
              "--eval-every",
              std::to_string(eval_every)};
    if (!p.host.empty()) {
      p.argv.push_back("--stop-on-stdin-eof");
      remote_hosts.insert(p.host);
    }
    peers.push_back(std::move(p));
  }
  std::cout << "fastk run: " << n << " peers"
            << (remote_hosts.empty() ? " on this machine"
                                     : " on " + std::to_string(remote_hosts.size()) +
                                           " remote host(s) and this machine")
            << ", " << config.run.iterations << " iterations each; logs in "
            << (run_dir / "logs").string() << std::endl;

  LaunchOptions options;
  options.log_dir = run_dir / "logs";
  options.terminal = isatty(STDOUT_FILENO) != 0;
  options.remote_dir = std::filesystem::current_path().string();
  options.stop_grace_s = static_cast<double>(config.cluster.peer_timeout_ms) / 1000.0 + 5;
  options.should_stop = [] { return g_interrupted.load(); };
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const LaunchResult result = launch_peers(peers, options, std::cout);
  // A peer that was killed could not remove its shared-memory models ("shm"): do it here.
  for (int i = 0; i < n; ++i) {
    const std::string models = peer_endpoints(config.cluster, n, i).shared_models;
    if (!models.empty()) transport::remove_shared_models(models);
  }

  // Peers on other hosts wrote into the same path there: fetch their folders.
  for (const auto& p : peers) {
    if (p.host.empty()) continue;
    const std::string from =
        p.host + ":" + (run_dir / "peers" / ("peer-" + std::to_string(p.peer))).string();
    ChildProcess scp(
        {"scp", "-q", "-r", "-o", "BatchMode=yes", from, (run_dir / "peers").string()});
    while (!scp.poll_exit()) {
      for (const auto& line : scp.read_lines()) std::cerr << "scp: " << line << "\n";
      usleep(50'000);
    }
  }

  const auto evaluations = evaluate_mean_models(config, run_dir, n);
  merge_peer_csv(run_dir, "iterations.csv", n);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  nlohmann::ordered_json summary = summarize_run(run_dir, n, evaluations, wall_s);
  summary["ok"] = result.ok();
  std::ofstream(run_dir / "summary.json") << summary.dump(2) << "\n";
  print_table(summary);
  if (!evaluations.empty()) {
    const auto& e = evaluations.back();
    std::cout << "\nmean model at iteration " << e.iteration << ": test accuracy "
              << std::setprecision(4) << 100 * e.test_accuracy << "%, loss " << e.test_loss
              << ", consensus distance " << e.consensus_distance << "\n";
  }
  std::cout << "bytes sent per iteration per peer: "
            << static_cast<std::int64_t>(summary["bytes_per_iteration"].get<double>())
            << "; time waiting: " << std::setprecision(3)
            << 100 * summary["wait_fraction"].get<double>() << "%\n";

  if (!o.no_plots) {
    // Debian's interpreter has python3-matplotlib even when another python3 comes first.
    const std::string python =
        std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string command =
        python + " '" FASTK_SOURCE_DIR "/experiments/plot_run.py' '" + run_dir.string() + "'";
    if (std::system(command.c_str()) != 0) std::cerr << "fastk run: plotting failed\n";
  }
  std::cout << "outputs in " << run_dir.string() << std::endl;
  if (result.stopped) {
    std::cerr << "fastk run: stopped by a signal; partial results kept\n";
    return 130;
  }
  if (!result.ok()) {
    std::cerr << "fastk run: " << describe_failures(result);
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run every peer of a config as its own process (here or over ssh) and collect results");
  cmd->footer(
      "Peers whose [cluster] host is not a loopback address are started with ssh (BatchMode:\n"
      "key-based login) in the same working directory, with the same binary path (or\n"
      "--remote-fastk) and data paths on every host; their outputs are fetched with scp.\n"
      "Ctrl-C stops every peer; their metrics so far are kept.");
  cmd->add_option("config", options->config, "Experiment config (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--eval-every", options->eval_every,
                  "Iterations between model snapshots for the mean-model evaluation "
                  "(default: iterations / 10)");
  cmd->add_flag("--no-plots", options->no_plots, "Skip the PNG plots");
  cmd->add_option("--remote-fastk", options->remote_fastk,
                  "Path of the fastk binary on remote hosts (default: this binary's path)");
  cmd->callback([options] {
    const int code = run(*options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fastk::node
