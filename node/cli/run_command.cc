// fastk run CONFIG: every peer of the config as its own process, on this machine or on the
// [cluster] hosts over ssh; one live progress line; the run's outputs collected at the end.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "consensus/comeback.h"
#include "consensus/pairwise_averaging.h"
#include "node/calibration/calibration.h"
#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/cli/run_keys.h"
#include "node/config/cluster.h"
#include "node/config/experiment_config.h"
#include "node/config/resolved_config.h"
#include "node/launch/idle_evaluation.h"
#include "node/launch/launcher.h"
#include "node/launch/mean_model_evaluator.h"
#include "node/launch/run_outputs.h"
#include "node/launch/snapshots.h"
#include "node/launch/wall_clock.h"
#include "node/measure/measure.h"
#include "node/metrics/output_files.h"
#include "node/report/run_results.h"
#include "node/stragglers/delay_model.h"
#include "node/training/peer_trainer.h"
#include "node/transport/probe.h"
#include "node/transport/shared_models.h"
#include "node/transport/zmq_transport.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted = true; }

struct RunOptions {
  ConfigOptions config;
  bool no_plots = false;
  bool keep_snapshots = false;
  std::string remote_fastk;
  std::string calibration;
  int restart_failed = 0;
};

// resolved_config.json, as `fastk sim` writes it: the config with its defaults filled in, and
// the calibration given.
void write_resolved_config(const RunOptions& o, const ExperimentConfig& config,
                           const std::filesystem::path& run_dir, double interval_s) {
  nlohmann::ordered_json j =
      resolved_config(config, topology::build_topology(config.topology), interval_s);
  if (!o.calibration.empty()) {
    j["calibration"] = calibration::to_json(calibration::read_calibration(o.calibration));
  }
  metrics::write_json_file(run_dir / "resolved_config.json", j);
}

// The base gradient time injected slowdowns multiply: from --calibration, else timed here
// once for every peer (so peers starting together do not each time it on shared cores).
double base_gradient_s(const RunOptions& o, const ExperimentConfig& config,
                       std::size_t parameters) {
  if (!o.calibration.empty()) {
    return calibration::read_calibration_for(o.calibration, config, parameters).gradient_s;
  }
  return measure::measure_gradients(config, 30).plain_s;
}

// `nonce`: this launch's own (node_command.cc mixes it into the run id).
std::vector<PeerLaunch> peer_launches(const RunOptions& o, const ExperimentConfig& config, int n,
                                      const std::filesystem::path& config_path,
                                      const std::filesystem::path& run_dir, double epoch_s,
                                      double base_s, std::uint64_t nonce) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<PeerLaunch> peers;
  for (int i = 0; i < n; ++i) {
    const auto endpoint = parse_tcp_endpoint(peer_endpoints(config.cluster, n, i).connect);
    PeerLaunch p;
    p.peer = i;
    p.host = endpoint && !is_loopback(endpoint->host) ? endpoint->host : "";
    p.argv = {p.host.empty() || o.remote_fastk.empty() ? self : o.remote_fastk, "node",
              config_path.string()};
    for (const auto& setting : o.config.overrides) {
      p.argv.push_back("--set");
      p.argv.push_back(setting);
    }
    char epoch[64], base[64];
    std::snprintf(epoch, sizeof epoch, "%.6f", epoch_s);
    std::snprintf(base, sizeof base, "%.9g", base_s);
    for (const std::string& a :
         {std::string("--id"), std::to_string(i), std::string("--run-nonce"), std::to_string(nonce),
          std::string("--output"), run_dir.string(), std::string("--epoch"), std::string(epoch),
          std::string("--base-gradient-s"), std::string(base), std::string("--wait-for-start")}) {
      p.argv.push_back(a);
    }
    p.argv.push_back("--stop-on-stdin-eof");  // the launcher's end of the pipe (launcher.cc)
    // A local peer's final model the launcher evaluates (mean_model_evaluator.h), in idle
    // time; remote peers evaluate theirs on their own hosts, in parallel.
    if (p.host.empty()) p.argv.push_back("--no-final-evaluation");
    // Back after a failure or a [churn] leave: mid-run, so without waiting for a go
    // (docs/protocol.md §6.4).
    if (o.restart_failed > 0 || !config.churn.schedule.empty()) {
      for (const auto& a : p.argv)
        if (a != "--wait-for-start") p.restart_argv.push_back(a);
      p.restart_argv.push_back("--resume");
    }
    peers.push_back(std::move(p));
  }
  return peers;
}

// Peers on other hosts wrote into the same path there: copies their folders here (scp, all
// at once, each giving up on a host that does not answer in 5 s) and returns the peers whose
// copy failed.
std::vector<int> fetch_remote_outputs(const std::vector<PeerLaunch>& peers,
                                      const std::filesystem::path& run_dir) {
  std::vector<std::pair<const PeerLaunch*, std::unique_ptr<ChildProcess>>> copies;
  for (const auto& p : peers) {
    if (p.host.empty()) continue;
    const std::string from = p.host + ":" + metrics::peer_folder(run_dir, p.peer).string();
    copies.emplace_back(&p, std::make_unique<ChildProcess>(std::vector<std::string>{
                                "scp", "-q", "-r", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                                from, (run_dir / "peers").string()}));
  }
  std::vector<int> failed;
  for (auto& [p, scp] : copies) {
    const ExitStatus status =
        scp->wait([](const std::string& line) { std::cerr << "scp: " << line << "\n"; });
    if (!status.ok()) {
      std::cerr << "fastk run: copying peer " << p->peer << "'s outputs from " << p->host
                << " failed (" << status.describe() << ")\n";
      failed.push_back(p->peer);
    }
  }
  return failed;
}

void print_start_line(const std::vector<PeerLaunch>& peers, const ExperimentConfig& config,
                      double base_s, const std::filesystem::path& run_dir) {
  std::set<std::string> remote_hosts;
  for (const auto& p : peers)
    if (!p.host.empty()) remote_hosts.insert(p.host);
  const bool some_local =
      std::any_of(peers.begin(), peers.end(), [](const PeerLaunch& p) { return p.host.empty(); });
  const std::string where = remote_hosts.empty()
                                ? std::string(" on this machine")
                                : " on " + std::to_string(remote_hosts.size()) + " remote host(s)" +
                                      (some_local ? " and this machine" : "");
  std::cout << "fastk run: " << peers.size() << " peers" << where << ", " << config.run.iterations
            << " iterations each"
            << (config.run.duration_s > 0
                    ? " at most, for " + std::to_string(config.run.duration_s) + " s"
                    : std::string())
            << "; base gradient " << std::setprecision(3) << 1000 * base_s << " ms; logs in "
            << (run_dir / "logs").string() << std::endl;
}

// How each failed peer ended, for summary.json and the table (launcher.h how_it_ended).
std::map<int, nlohmann::ordered_json> peer_failures(const LaunchResult& result) {
  std::map<int, nlohmann::ordered_json> failures;
  for (const auto& p : result.peers) {
    if (p.status.ok()) continue;
    const std::string signal = end_signal(p);
    failures[p.peer] = {
        {"status", how_it_ended(p)},
        {"host", p.host.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.host)},
        {"signal",
         signal.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(signal)},
        {"exit_code", p.status.signal != 0 ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json(p.status.code)},
        {"said", !p.refused.empty() ? p.refused : p.died}};
  }
  return failures;
}

int exit_code(const LaunchResult& result, const std::vector<int>& not_fetched) {
  if (result.stopped) {
    std::cerr << "fastk run: stopped by a signal; partial results kept\n";
    return 130;
  }
  if (!result.ok()) {
    std::cerr << "fastk run: " << describe_failures(result);
    return 1;
  }
  if (!not_fetched.empty()) {
    std::cerr << "fastk run: the outputs of " << not_fetched.size()
              << " remote peer(s) could not be copied here (see above); the results lack them\n";
    return 1;
  }
  return 0;
}

// Before anything is written or removed: every peer of this machine must be able to listen
// where [cluster] says. A port (or the Unix-domain socket standing for it) that another run
// or program holds would otherwise fail every peer, after the run folder was emptied.
void check_local_endpoints_free(const ExperimentConfig& config, int n) {
  std::vector<std::string> binds;
  std::vector<int> peers;
  for (int i = 0; i < n; ++i) {
    const PeerEndpoints e = peer_endpoints(config.cluster, n, i);
    const auto where = parse_tcp_endpoint(e.connect);
    if (where && !is_loopback(where->host)) continue;  // on another host: fastk doctor checks
    transport::make_ipc_folder_private(e.bind);        // where the probe binds, as the peers will
    binds.push_back(e.bind);
    peers.push_back(i);
  }
  const transport::ProbeServer probe(binds);  // binds them all, then lets go
  std::string taken;
  for (std::size_t k = 0; k < binds.size(); ++k) {
    if (probe.bind_errors()[k].empty()) continue;
    taken += "\n  peer " + std::to_string(peers[k]) + ": " + binds[k] + " (" +
             probe.bind_errors()[k] + ")";
  }
  if (taken.empty()) return;
  const std::string move =
      config.cluster.endpoints.empty()
          ? "[cluster] base_port (now " + std::to_string(config.cluster.base_port) +
                "), e.g. --set cluster.base_port=" +
                std::to_string(config.cluster.base_port > 60000 ? 20000
                                                                : config.cluster.base_port + 1000)
          : std::string("other ports in [cluster] endpoints");
  throw std::runtime_error("this run's peers cannot listen where [cluster] puts them:" + taken +
                           "\nanother run or program holds those ports: stop it, or give this "
                           "run " +
                           move);
}

// The mean model while the peers run: evaluated in idle time (idle_evaluation.h), and, with
// run.stop_at_target, the newest known instant at once, to stop there.
struct LiveEvaluation {
  LiveEvaluation(MeanModelEvaluator& e, bool all_local)
      : evaluator(e), idle(e, all_local ? MeanModelEvaluator::evaluation_threads() : 0) {}

  MeanModelEvaluator& evaluator;
  IdleEvaluation idle;
  std::vector<metrics::Evaluation> evaluations;
  bool target_reached = false;

  void add(std::vector<metrics::Evaluation> made, const RunConfig& run) {
    for (auto& e : made) {
      target_reached = target_reached || (run.stop_at_target && metrics::reaches_target(e, run));
      evaluations.push_back(std::move(e));
    }
  }
  // What was evaluated while the peers ran, so far (the idle thread goes on with its last
  // instant: write_run_results collects it).
  std::vector<metrics::Evaluation> so_far() {
    std::vector<metrics::Evaluation> all = std::move(evaluations);
    for (auto& e : idle.take()) all.push_back(std::move(e));
    return all;
  }
};

// A remote host that goes away (its link down, the machine off) ends its ssh sessions in
// about peer_timeout_ms (3 s at the least), when its neighbours give up on its peers too,
// instead of after TCP's hours: ssh probes the server every third of it and gives up after
// three misses.
std::vector<std::string> ssh_command(const ExperimentConfig& config) {
  const auto probe_s = std::max<std::int64_t>(1, config.cluster.peer_timeout_ms / 3000);
  return {"ssh",
          "-o",
          "BatchMode=yes",
          "-o",
          "ConnectTimeout=10",  // an unreachable host fails the start, not hangs it
          "-o",
          "ServerAliveInterval=" + std::to_string(probe_s),
          "-o",
          "ServerAliveCountMax=3",
          "-T"};
}

LaunchOptions launch_options(const ExperimentConfig& config, const std::filesystem::path& run_dir,
                             int restart_failed, LiveEvaluation& live) {
  LaunchOptions options;
  options.log_dir = run_dir / "logs";
  options.terminal = isatty(STDOUT_FILENO) != 0;
  options.remote_dir = std::filesystem::current_path().string();
  options.stop_grace_s = static_cast<double>(config.cluster.peer_timeout_ms) / 1000.0 + 5;
  options.ssh = ssh_command(config);
  options.should_stop = [] { return g_interrupted.load(); };
  options.start_together = true;
  options.restart_failed = restart_failed;
  options.churn = config.churn.schedule;
  options.should_finish = [&config, &live] {
    live.add(live.idle.take(), config.run);
    if (config.run.stop_at_target) live.add(live.evaluator.evaluate_new(), config.run);
    return live.target_reached;
  };
  options.status_extra = [&live] {
    const auto newest =
        std::max_element(live.evaluations.begin(), live.evaluations.end(),
                         [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    if (newest == live.evaluations.end()) return std::string();
    char text[64];
    std::snprintf(text, sizeof text, " | mean model %.2f%%", 100 * newest->test_accuracy);
    return std::string(text);
  };
  return options;
}

// While the run's keys exist and the peers run, Ctrl-C and SIGTERM only ask the peers to stop
// (the launcher's should_stop): fastk run goes on to fetch the outputs and remove the keys
// everywhere (the copies are bounded by scp's time-outs). Afterwards they end fastk run
// itself (evaluation, plots).
void catch_interrupts(bool on) {
  struct sigaction action {};
  action.sa_handler = on ? on_interrupt : SIG_DFL;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Launches the peers (catch_interrupts turns Ctrl-C into a stop request), then removes the
// shared-memory models a killed peer could not.
LaunchResult launch_with_signals(const std::vector<PeerLaunch>& peers, const LaunchOptions& options,
                                 const ExperimentConfig& config, int n) {
  LaunchResult result = launch_peers(peers, options, std::cout);
  for (int i = 0; i < n; ++i) {
    const std::string models = peer_endpoints(config.cluster, n, i).shared_models;
    if (!models.empty()) transport::remove_shared_models(models);
  }
  return result;
}

int run(const RunOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  signal(SIGPIPE, SIG_IGN);  // a remote peer's stdin may close while we write to it
  const std::filesystem::path config_path = std::filesystem::absolute(o.config.config);
  const ExperimentConfig config = load_config(o.config);
  training::check_optimizer(config.optimizer);  // before any peer starts
  const bool checkpoints = config.run.checkpoint_every > 0 || config.run.checkpoint_every_s > 0;
  if (o.restart_failed > 0) {
    const auto how =
        checkpoints ? consensus::Comeback::kFromCheckpoint : consensus::Comeback::kJoining;
    if (const auto why = consensus::why_no_comeback(config.consensus.protocol, how)) {
      throw std::invalid_argument("--restart-failed: " + *why);
    }
  }
  const topology::Topology topology = topology::build_topology(config.topology);
  const int n = topology.graph.size();
  for (const ChurnEvent& e : config.churn.schedule) {  // an edge list's size is known only now
    if (e.peer >= n) {
      throw std::invalid_argument("[churn]: peer " + std::to_string(e.peer) +
                                  " is not a peer of the run (0 to " + std::to_string(n - 1) + ")");
    }
  }
  if (config.consensus.protocol.policy.kind == consensus::PolicyKind::kAdPsgd) {
    consensus::PairwiseAveraging::sides_of(*topology.schedule);  // not bipartite: before any peer
  }
  // Peer ids in [stragglers] checked here, not by every peer after they all started.
  stragglers::DelayModel(config.stragglers, n);
  check_local_endpoints_free(config, n);
  const auto claim = claim_run_folder(o.config, config, "");
  const std::filesystem::path& run_dir = claim->path();
  std::filesystem::copy_file(config_path, run_dir / "config.toml");

  const double interval_s = config.run.evaluation_interval_s(kWallClockEvaluationInterval_s);
  write_resolved_config(o, config, run_dir, interval_s);
  const double epoch_s = std::floor(unix_now_s());
  // The mean model while the peers run, only to stop at the target: evaluating it takes CPU
  // the peers would otherwise have (the rest is evaluated once they have exited).
  MeanModelEvaluator evaluator(config, run_dir, n, epoch_s, interval_s);
  const double base_s = base_gradient_s(o, config, evaluator.parameters());
  std::random_device entropy;
  const std::uint64_t nonce = (std::uint64_t{entropy()} << 32) | entropy();
  std::vector<PeerLaunch> peers =
      peer_launches(o, config, n, config_path, run_dir, epoch_s, base_s, nonce);
  if (config.run.stop_at_target &&
      std::any_of(peers.begin(), peers.end(), [](const auto& p) { return !p.host.empty(); })) {
    // The live evaluation reads the peers' snapshots from this machine's run folder.
    throw std::invalid_argument(
        "run.stop_at_target needs every peer on this machine (remote peers' snapshots are "
        "only copied here after the run); drop it, or use run.duration_s");
  }
  // Fresh keys for this launch when its links need them (security.h).
  std::optional<RunKeys> keys;
  catch_interrupts(true);
  if (launcher_makes_keys(config.security, config.cluster, n)) {
    RunKeys::remove_stale(ssh_command(config));
    keys.emplace(n, peers, ssh_command(config));
  }
  print_start_line(peers, config, base_s, run_dir);
  if (const auto warning = plain_tcp_warning(config.security, config.cluster, n)) {
    std::cerr << *warning << std::endl;
  }
  // Remote peers' folders arrive only after the run (scp writes them in place): nothing is
  // evaluated before then.
  LiveEvaluation live{evaluator, std::none_of(peers.begin(), peers.end(),
                                              [](const auto& p) { return !p.host.empty(); })};
  claim->keep();  // the peers start: their logs and results stay, whatever follows
  const LaunchResult result = launch_with_signals(
      peers, launch_options(config, run_dir, o.restart_failed, live), config, n);
  const std::vector<int> not_fetched = fetch_remote_outputs(peers, run_dir);
  remove_peer_temporaries(run_dir, n);  // every peer has exited
  keys.reset();  // nothing needs them now: gone before the evaluation and plots
  catch_interrupts(false);

  metrics::RunSummary launcher;  // what only the launcher knows
  launcher.ok = result.ok() && not_fetched.empty();
  launcher.outputs_not_fetched = not_fetched;
  launcher.base_gradient_s = base_s;
  launcher.calibrated = !o.calibration.empty();
  launcher.peer_failures = peer_failures(result);
  write_run_results({.config = config,
                     .run_dir = run_dir,
                     .peers = n,
                     .evaluator = evaluator,
                     .live_evaluations = live.so_far(),
                     .idle_evaluation = &live.idle,
                     .launcher = launcher,
                     .launch_started = started,
                     .evaluate_snapshots = true,
                     .keep_snapshots = o.keep_snapshots,
                     .keep_peer_csv = false,
                     .plots = !o.no_plots});
  return exit_code(result, not_fetched);
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
      "The mean model is evaluated every run.eval_interval_s of wall time (evaluation.csv);\n"
      "with run.stop_at_target the run ends once it reaches run.target_accuracy or\n"
      "run.target_loss (all peers on this machine).\n"
      "Ctrl-C stops every peer; their metrics so far are kept.");
  add_config_options(cmd, options->config);
  cmd->add_option("--calibration", options->calibration,
                  "A `fastk calibrate` file for this config: the base gradient time injected "
                  "slowdowns multiply (default: timed here before the peers start)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--no-plots", options->no_plots, "Skip the PNG plots");
  cmd->add_flag("--keep-snapshots", options->keep_snapshots,
                "Keep the peers' model snapshots (peers/peer-*/model-t*.f32, one model per "
                "peer per run.eval_interval_s) after the evaluation instead of deleting them");
  cmd->add_option("--restart-failed", options->restart_failed,
                  "Start a peer that fails mid-run (killed, crashed) again, at most N times: it "
                  "goes on from its checkpoint (run.checkpoint_every, run.checkpoint_every_s) "
                  "or joins from its neighbours' models (docs/protocol.md §6.4); default 0")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--remote-fastk", options->remote_fastk,
                  "Path of the fastk binary on remote hosts (default: this binary's path)");
  cmd->callback([options] {
    const int code = run(*options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fastk::node
