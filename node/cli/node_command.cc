// fastk node CONFIG [--id I]: one real peer of the config's run, over ZeroMQ.
#include <sys/resource.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "node/cli/commands.h"
#include "node/config/experiment_config.h"
#include "node/metrics/iteration_csv.h"
#include "node/peer/peer_runtime.h"
#include "node/peer_id.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

struct NodeOptions {
  std::string config;
  std::optional<int> id;
  std::string output;
  bool stop_on_stdin_eof = false;
  std::int64_t eval_every = 0;
  double progress_interval_s = 0.5;
};

// FNV-1a of the config file: peers started from different configs refuse each other.
std::uint64_t fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text.str()) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void run_node(const NodeOptions& o) {
  const ExperimentConfig config = load_config(o.config);
  const int peers = topology::build_topology(config.topology).graph.size();
  peer::PeerOptions options;
  options.peer = resolve_peer_id(o.id, peers);
  options.run_id = fingerprint(o.config);
  options.stop_on_stdin_eof = o.stop_on_stdin_eof;
  options.progress_interval_s = o.progress_interval_s;
  options.eval_every = o.eval_every;

  const std::filesystem::path run_dir =
      o.output.empty() ? std::filesystem::path(config.run.output) / config.run.name
                       : std::filesystem::path(o.output);
  const std::filesystem::path dir = run_dir / "peers" / ("peer-" + std::to_string(options.peer));
  std::filesystem::create_directories(dir);
  metrics::IterationCsv iterations((dir / "iterations.csv").string());
  std::ofstream evaluations(dir / "evaluations.csv");
  if (!evaluations) throw std::runtime_error("cannot write to " + dir.string());
  evaluations << "iteration,elapsed_s,test_loss,test_accuracy\n";

  peer::PeerHooks hooks;
  hooks.on_iteration = [&](const consensus::IterationRecord& r, double loss) {
    iterations.write(r, loss);
  };
  hooks.on_evaluation = [&](std::int64_t k, double elapsed_s, const learning::Evaluation& e,
                            std::span<const float> model) {
    evaluations << k << ',' << elapsed_s << ',' << e.loss << ',' << e.accuracy << '\n';
    std::ofstream snapshot(dir / ("model-" + std::to_string(k) + ".f32"), std::ios::binary);
    snapshot.write(reinterpret_cast<const char*>(model.data()),
                   static_cast<std::streamsize>(model.size_bytes()));
  };

  std::cout << "fastk node: peer " << options.peer << " of " << peers << ", writing to "
            << dir.string() << std::endl;
  const peer::PeerReport r = peer::run_peer(config, options, hooks);

  nlohmann::ordered_json summary;
  summary["peer"] = r.peer;
  summary["iterations"] = r.iterations;
  summary["finished"] = r.finished;
  summary["stopped"] = r.stopped;
  summary["startup_s"] = r.startup_s;
  summary["elapsed_s"] = r.elapsed_s;
  summary["first_iteration_monotonic_s"] = r.first_iteration_monotonic_s;
  summary["last_update_monotonic_s"] = r.last_update_monotonic_s;
  summary["waiting_s"] = r.waiting_s;
  summary["compute_s"] = r.compute_s;
  summary["injected_s"] = r.injected_s;
  summary["mean_backups"] = r.mean_backups;
  summary["messages_sent"] = r.messages_sent;
  summary["sends_refused"] = r.sends_refused;
  summary["models_superseded"] = r.models_superseded;
  summary["bytes_sent"] = r.bytes_sent;
  summary["shared_models_sent"] = r.shared_models_sent;
  summary["shared_bytes"] = r.shared_bytes;
  summary["shared_models_lapped"] = r.shared_models_lapped;
  summary["rejected_frames"] = r.rejected;
  auto& departures = summary["departures"] = nlohmann::ordered_json::array();
  for (const auto& d : r.departures) {
    departures.push_back({{"peer", d.peer}, {"at_iteration", d.at_iteration}, {"how", d.how}});
  }
  summary["test_loss"] = r.final_eval.loss;
  summary["test_accuracy"] = r.final_eval.accuracy;
  summary["peak_rss_mib"] = peak_rss_mib();
  std::ofstream(dir / "summary.json") << summary.dump(2) << "\n";
  std::ofstream model(dir / "model-final.f32", std::ios::binary);
  model.write(reinterpret_cast<const char*>(r.final_model.data()),
              static_cast<std::streamsize>(r.final_model.size() * sizeof(float)));

  std::cout << "fastk node: peer " << r.peer << (r.finished ? " finished " : " stopped after ")
            << r.iterations << " iterations in " << r.elapsed_s << " s, waiting " << r.waiting_s
            << " s, test accuracy " << r.final_eval.accuracy << ", peak RSS " << peak_rss_mib()
            << " MiB";
  for (const auto& d : r.departures) {
    std::cout << "; neighbour " << d.peer << " left (" << d.how << ") at iteration "
              << d.at_iteration;
  }
  std::cout << std::endl;
}

}  // namespace

void add_node_command(CLI::App& app) {
  auto options = std::make_shared<NodeOptions>();
  CLI::App* cmd = app.add_subcommand("node", "Run one peer of a config over ZeroMQ");
  cmd->footer(
      "The peer id comes from --id, else from mpirun (OMPI_COMM_WORLD_RANK, PMI_RANK) or\n"
      "srun (SLURM_PROCID). Usually started by `fastk run`; start it by hand, or with\n"
      "mpirun/srun, to place peers yourself:\n"
      "  mpirun -n 8 fastk node experiments/configs/quickstart.toml");
  cmd->add_option("config", options->config, "Experiment config (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--id", options->id, "This peer's id (0-based)");
  cmd->add_option("-o,--output", options->output, "Run folder (default: run.output/run.name)");
  cmd->add_option("--eval-every", options->eval_every,
                  "Evaluate the own model every N iterations (default: at the end only)");
  cmd->add_option("--progress-interval", options->progress_interval_s,
                  "Seconds between @progress lines (default 0.5)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--stop-on-stdin-eof", options->stop_on_stdin_eof,
                "Stop cleanly when stdin closes (set by the launcher for ssh peers)");
  cmd->callback([options] { run_node(*options); });
}

}  // namespace fastk::node
