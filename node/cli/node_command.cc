// fastk node CONFIG [--id I]: one real peer of the config's run, over ZeroMQ.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "consensus/comeback.h"
#include "node/calibration/calibration.h"
#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/config/experiment_config.h"
#include "node/launch/progress.h"
#include "node/launch/snapshots.h"
#include "node/metrics/iteration_csv.h"
#include "node/metrics/output_files.h"
#include "node/metrics/replay_record.h"
#include "node/peer/checkpoint.h"
#include "node/peer/peer_id.h"
#include "node/peer/peer_runtime.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

struct NodeOptions {
  ConfigOptions config;
  std::optional<int> id;
  bool stop_on_stdin_eof = false;
  double progress_interval_s = 0.5;
  std::string calibration;     // base gradient time from a `fastk calibrate` file
  double base_gradient_s = 0;  // or given directly (what `fastk run` passes)
  double epoch_s = 0;          // evaluation instants count from this Unix time; 0: none
  bool wait_for_start = false;
  bool no_final_evaluation = false;
  std::string keys;             // a CURVE key folder, over [security] keys
  std::uint64_t run_nonce = 0;  // fastk run's, the same for every peer of one launch
  bool resume = false;          // go on from the checkpoint, or join from the neighbours
};

// The peak resident memory of this process image: VmHWM of /proc/self/status. Not
// getrusage's ru_maxrss, which a process started by posix_spawn inherits from its launcher
// (glibc spawns with a shared address space, and exec keeps the larger peak), so every peer
// of `fastk run` reported the launcher's peak.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return 0;
}

// When the peer's first iteration began, kept for a process that brings it back (--resume).
constexpr const char* kBeganFile = "began.json";

std::optional<peer::IterationStart> read_iteration_start(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("unix_s") || !j.contains("monotonic_s") ||
      !j["unix_s"].is_number() || !j["monotonic_s"].is_number()) {
    throw std::runtime_error("'" + path.string() +
                             "' is not what a peer wrote when it began (delete it to count "
                             "this peer's times from its restart)");
  }
  return peer::IterationStart{j["unix_s"].get<double>(), j["monotonic_s"].get<double>()};
}

// What only a restart of this peer reads: its checkpoint and when it began.
void remove_restart_files(const std::filesystem::path& dir) {
  std::error_code ignored;
  std::filesystem::remove(peer::checkpoint_path(dir), ignored);
  std::filesystem::remove(dir / kBeganFile, ignored);
}

// What a peer writes while it runs, beside its summary: iterations.csv (and neighbours.csv),
// its snapshots, what a replay needs (arrivals.csv, timers.csv) and when it began.
class PeerFiles {
 public:
  PeerFiles(const std::filesystem::path& dir, int peer, bool neighbours_csv, bool resume)
      : dir_(dir),
        iterations_((dir / "iterations.csv").string(), resume, neighbours_csv),
        snapshots_(dir, resume),
        record_(dir, peer, neighbours_csv, resume) {}
  peer::PeerHooks hooks() {
    peer::PeerHooks hooks;
    hooks.on_iteration = [this](const consensus::IterationRecord& r, double loss) {
      iterations_.write(r, loss);
    };
    hooks.on_arrival = [this](std::int64_t k, int from, std::int64_t tag, double at_s, bool bye) {
      record_.arrival(k, tag, from, at_s, bye);
    };
    hooks.on_timer = [this](std::int64_t k, double at_s) { record_.timer(k, at_s); };
    hooks.on_checkpoint = [this] { flush(); };
    hooks.on_began = [this](const peer::IterationStart& start) {
      metrics::write_json_file(dir_ / kBeganFile,
                               {{"unix_s", start.unix_s}, {"monotonic_s", start.monotonic_s}});
    };
    hooks.on_snapshot = [this](std::int64_t instant, std::int64_t k, std::span<const float> model) {
      snapshots_.write(instant, k, model);
    };
    return hooks;
  }
  void flush() {
    iterations_.flush();
    record_.flush();
  }

 private:
  std::filesystem::path dir_;
  metrics::IterationCsv iterations_;
  SnapshotWriter snapshots_;
  metrics::ReplayRecord record_;
};

void print_ending(const peer::PeerReport& r) {
  std::cout << "fastk node: peer " << r.peer << (r.finished ? " finished " : " stopped after ")
            << r.iterations << " iterations (" << r.end << ") in " << r.elapsed_s << " s, waiting "
            << r.waiting_s << " s, test accuracy "
            << (r.final_eval        ? std::to_string(r.final_eval->accuracy)
                : r.iterations == 0 ? std::string("none (no iteration)")
                                    : std::string("left to the launcher"))
            << ", peak RSS " << peak_rss_mib() << " MiB";
  for (const auto& d : r.departures) {
    std::cout << "; neighbour " << d.peer << " left (" << d.how << ") at iteration "
              << d.at_iteration;
  }
  std::cout << std::endl;
}

void run_node(const NodeOptions& o) {
  // Progress goes to the launcher's pipe: once the launcher is gone a write fails (and is
  // dropped) instead of killing the peer before it writes its outputs.
  signal(SIGPIPE, SIG_IGN);
  struct stat in {};
  if (o.stop_on_stdin_eof &&
      (::fstat(STDIN_FILENO, &in) != 0 || !(S_ISFIFO(in.st_mode) || S_ISSOCK(in.st_mode)))) {
    throw std::runtime_error(
        "--stop-on-stdin-eof: stdin is not a pipe (a file or /dev/null ends at once, and the "
        "peer would stop before its first iteration); the flag is for a launcher that holds "
        "the other end, as fastk run does");
  }
  const ExperimentConfig config = load_config(o.config);
  // Whether from a checkpoint or joining is known only once the peer looks for its
  // checkpoint (peer_runtime.cc); what rules out both is refused here, before it loads data.
  if (o.resume) {
    if (const auto why = consensus::why_no_comeback(config.consensus.protocol,
                                                    consensus::Comeback::kFromCheckpoint)) {
      throw std::invalid_argument("--resume: " + *why);
    }
  }
  const int peers = topology::build_topology(config.topology).graph.size();
  peer::PeerOptions options;
  options.peer = resolve_peer_id(o.id, peers);
  // A launch's own nonce, mixed into the config's fingerprint: peers of two launches of one
  // config (at once, on the same ports) refuse each other's HELLO instead of forming one ring.
  options.config_fingerprint = run_fingerprint(o.config.config, o.config.overrides);
  options.run_id = options.config_fingerprint ^ (o.run_nonce * 0x9E3779B97F4A7C15ULL);
  // Once per run: by fastk run (which passes a nonce), else by peer 0.
  if (o.run_nonce == 0 && options.peer == 0) {
    if (const auto warning = plain_tcp_warning(config.security, config.cluster, peers)) {
      std::cerr << *warning << std::endl;
    }
    if (!config.churn.schedule.empty()) {
      std::cerr << "fastk node: warning: [churn] is carried out by `fastk run`, which asks peers "
                   "to leave and starts them again; peers started by hand, mpirun or srun run "
                   "without it"
                << std::endl;
    }
  }
  options.stop_on_stdin_eof = o.stop_on_stdin_eof;
  options.progress_interval_s = o.progress_interval_s;
  options.epoch_s = o.epoch_s;
  options.wait_for_start = o.wait_for_start;
  options.evaluate_final = !o.no_final_evaluation;
  options.keys = o.keys;
  // Snapshots are for a launcher that evaluates them (fastk run gives every peer the same
  // --epoch); a peer started by hand or by mpirun would only fill the disk with them.
  options.eval_interval_s =
      o.epoch_s > 0 ? config.run.evaluation_interval_s(kWallClockEvaluationInterval_s) : 0.0;
  options.base_gradient_s = o.base_gradient_s;
  if (!o.calibration.empty()) {
    const calibration::Calibration c = calibration::read_calibration_for(o.calibration, config);
    options.base_gradient_s = c.gradient_s;
    options.base_gradient_parameters = c.parameters;  // checked once the model is built
  }

  const std::filesystem::path dir =
      metrics::peer_folder(run_folder(o.config, config), options.peer);
  std::filesystem::create_directories(dir);
  // Which config this peer ran, for `fastk report RUN_DIR` after an mpirun or srun launch.
  metrics::write_json_file(dir / metrics::kPeerLaunchFile,
                           {{"config", std::filesystem::absolute(o.config.config).string()},
                            {"overrides", o.config.overrides}});
  options.checkpoint = peer::checkpoint_path(dir);
  options.resume = o.resume;
  if (o.resume) {
    options.began_before = read_iteration_start(dir / kBeganFile);
  } else {  // a fresh start: what an earlier run left for its restarts is not this run's
    remove_restart_files(dir);
  }
  PeerFiles files(dir, options.peer, config.run.neighbours_csv, o.resume);

  std::cout << "fastk node: peer " << options.peer << " of " << peers << ", writing to "
            << dir.string() << std::endl;
  peer::RunRequests requests;  // from signals and stdin (peer/stop_watcher.h)
  peer::PeerReport r = peer::run_peer(config, options, files.hooks(), requests);
  r.peak_rss_mib = peak_rss_mib();
  files.flush();
  r.resumed = o.resume;
  metrics::write_model(dir / "model-final.f32", r.final_model);
  metrics::write_json_file(dir / "summary.json", metrics::to_json(r));
  // The peer has ended for good (its summary says how), unless it left to come back ([churn]):
  // then its checkpoint and first start are what the comeback goes on from.
  if (r.end == "left") {
    std::cout << kLeftLine << std::endl;  // for the launcher: bring it back at its join
  } else {
    remove_restart_files(dir);
  }

  print_ending(r);
}

}  // namespace

void add_node_command(CLI::App& app) {
  auto options = std::make_shared<NodeOptions>();
  CLI::App* cmd = app.add_subcommand("node", "Run one peer of a config over ZeroMQ");
  cmd->footer(
      "The peer id comes from --id, else from mpirun (OMPI_COMM_WORLD_RANK, PMI_RANK) or\n"
      "srun (SLURM_PROCID). Usually started by `fastk run`; start it by hand, or with\n"
      "mpirun/srun, to place peers yourself (give every peer the same --set settings):\n"
      "  mpirun -n 8 fastk node experiments/configs/quickstart.toml");
  add_config_options(cmd, options->config);
  cmd->add_option("--id", options->id, "This peer's id (0-based)");
  cmd->add_option("--calibration", options->calibration,
                  "A `fastk calibrate` file: the base gradient time injected slowdowns multiply "
                  "(default: timed at start-up)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--base-gradient-s", options->base_gradient_s,
                  "The base gradient time in seconds, instead of a calibration file")
      ->check(CLI::PositiveNumber)
      ->excludes("--calibration");
  cmd->add_option("--epoch", options->epoch_s,
                  "Unix time the model snapshots (every run.eval_interval_s) count from; "
                  "give every peer the same. Without it (default 0) the peer saves only its "
                  "final model")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--progress-interval", options->progress_interval_s,
                  "Seconds between @progress lines (default 0.5)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--keys", options->keys,
                  "A key folder from `fastk keys` (over [security] keys): links are encrypted "
                  "and only the neighbours' keys can reach this peer (docs/security.md)");
  cmd->add_option("--run-nonce", options->run_nonce,
                  "A number every peer of one launch shares (set by `fastk run`): peers of "
                  "another launch of the same config are refused");
  cmd->add_flag("--resume", options->resume,
                "Bring back a peer that was killed: go on from its checkpoint (saved every "
                "run.checkpoint_every iterations or run.checkpoint_every_s seconds in its "
                "output folder), or without one from the average of its neighbours' models; "
                "its neighbours must still be running (docs/protocol.md §6.4)");
  cmd->add_flag("--wait-for-start", options->wait_for_start,
                "After the handshake print @ready and start only on SIGUSR2 (or a 'g' on a "
                "watched stdin): set by `fastk run` so that all peers start together");
  cmd->add_flag("--no-final-evaluation", options->no_final_evaluation,
                "Do not evaluate the final model on the test set (summary.json's test_accuracy "
                "is null): set by `fastk run`, which evaluates every peer's model-final.f32 "
                "itself while the others still run");
  cmd->add_flag("--stop-on-stdin-eof", options->stop_on_stdin_eof,
                "Stop cleanly when stdin closes, finish on an 'f', start on a 'g', leave on an "
                "'l' ([churn]) (set by `fastk run`: a peer whose launcher died stops and writes "
                "its outputs)");
  cmd->callback([options] { run_node(*options); });
}

}  // namespace fastk::node
