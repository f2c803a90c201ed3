// fastk calibrate CONFIG: what running the config's peers costs on this machine, for
// `fastk sim --calibration` and `fastk run --calibration` (node/calibration/).
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "learning/model.h"
#include "node/calibration/calibration.h"
#include "node/calibration/fit.h"
#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/config/security.h"
#include "node/launch/child_process.h"
#include "node/measure/measure.h"
#include "node/os/cpu_binding.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

// Set by SIGINT/SIGTERM during the reference runs.
std::atomic<bool> g_interrupted{false};

struct CalibrateOptions {
  ConfigOptions config;
  std::string file;  // default: <run folder>/calibration.json
  std::int64_t reference_iterations = 400;
  int repeats = 60;
  std::string hosts;  // a `fastk doctor --hosts-json` file
};

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// Runs the config's peers for real (`fastk run`, policy full, with `stragglers` as the
// [stragglers] table, the base gradient time of `calibration`) and returns the training
// phase per iteration.
double reference_iteration_s(const CalibrateOptions& o, const std::string& stragglers,
                             const std::filesystem::path& calibration,
                             const std::filesystem::path& folder) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> argv = {self, "run", o.config.config};
  for (const auto& setting : o.config.overrides) argv.insert(argv.end(), {"--set", setting});
  for (const std::string& setting : std::vector<std::string>{
           // Every peer from start to end: the fit is for a run's steady costs.
           "consensus.policy=full", "stragglers=" + stragglers, "coding={}", "churn={}",
           // Uncompressed: message_s is fitted to messages; compression has its own costs.
           "compression={}", "run.duration_s=0", "run.stop_at_target=false",
           "run.target_accuracy=0", "run.target_loss=0", "run.eval_interval_s=1000000",
           "run.iterations=" + std::to_string(o.reference_iterations)}) {
    argv.insert(argv.end(), {"--set", setting});
  }
  argv.insert(argv.end(),
              {"--output", folder.string(), "--no-plots", "--calibration", calibration.string()});
  ChildProcess run(argv);
  std::vector<std::string> tail;
  // Ctrl-C reaches only this process (the run has a process group of its own): pass it on,
  // so that the run stops its peers instead of going on without us.
  const ExitStatus status = run.wait([&](const std::string& line) { tail.push_back(line); },
                                     [] { return g_interrupted.load(); });
  if (g_interrupted) throw std::runtime_error("interrupted; no calibration written");
  if (!status.ok()) {
    std::string last;
    for (std::size_t i = tail.size() > 10 ? tail.size() - 10 : 0; i < tail.size(); ++i) {
      last += "\n    | " + tail[i];
    }
    throw std::runtime_error("the reference run failed (" + status.describe() +
                             "); its outputs: " + folder.string() + last);
  }
  std::ifstream in(folder / "summary.json");
  const auto summary = nlohmann::json::parse(in, nullptr, false);
  if (summary.is_discarded() || !summary.contains("training_phase_s")) {
    throw std::runtime_error("the reference run left no readable summary in " + folder.string());
  }
  return summary["training_phase_s"].get<double>() / static_cast<double>(o.reference_iterations);
}

void print_calibration(const calibration::Calibration& c, const std::filesystem::path& file) {
  const auto us = [](double s) { return 1e6 * s; };
  std::printf("fastk calibrate: %s on %s (%d CPUs), batch %d, %zu parameters\n", c.model.c_str(),
              c.host.c_str(), c.cpus, c.batch_size, c.parameters);
  std::printf("  gradient           %9.1f us (with the noise estimate %.1f us, +%.1f%%)\n",
              us(c.gradient_s), us(c.gradient_noise_s),
              100 * (c.gradient_noise_s / c.gradient_s - 1));
  std::printf(
      "  update             %9.1f us + %.1f us per neighbour model (+ %.1f us with "
      "momentum or weight decay)\n",
      us(c.update_s), us(c.update_per_term_s), us(c.direction_s));
  std::printf("  adaptive policy    %9.1f us per decision, %.1f us per model of disagreement\n",
              us(c.adaptive_decision_s), us(c.disagreement_per_term_s));
  std::printf("  validation         %9.2f us per sample and model (forward pass and loss)\n",
              us(c.loss_per_sample_s));
  std::printf("  message            %9.1f us of CPU at each end, %.1f us latency\n",
              us(c.message_s), us(c.latency_s));
  for (const auto& [kind, k] : c.compression) {
    std::printf("  compression %-8s %7.1f us to compress a difference, %.1f us to apply one\n",
                kind.c_str(), us(k.compress_s), us(k.apply_s));
  }
  std::printf("  reference runs     %d peers, %lld iterations, policy full, per iteration:\n",
              c.reference_peers, static_cast<long long>(c.reference_iterations));
  std::printf("    A, no stragglers, fitted      %8.1f us measured, %8.1f us simulated\n",
              us(c.reference_iteration_s), us(c.reference_simulated_s));
  std::printf("    B, peer 0 always 8x, a check  %8.1f us measured, %8.1f us simulated\n",
              us(c.reference_b_iteration_s), us(c.reference_b_simulated_s));
  std::printf("written to %s (use: fastk sim CONFIG --calibration %s)\n", file.string().c_str(),
              file.string().c_str());
}

// The hosts' gradient times of `--hosts`, in this calibration's terms; what does not fit the
// config's [cluster] is said, not fatal.
std::map<std::string, double> host_gradients(const CalibrateOptions& o,
                                             const calibration::HostGradients& doctor,
                                             double gradient_s, const ExperimentConfig& config) {
  if (o.hosts.empty()) return {};
  std::vector<std::string> warnings;
  auto relative = calibration::host_gradients_for(doctor, gradient_s, config.cluster, warnings);
  for (const auto& w : warnings) std::cerr << "fastk calibrate: warning: " << w << "\n";
  return relative;
}

void run_calibrate(const CalibrateOptions& o) {
  const ExperimentConfig config = load_config(o.config);
  if (!o.file.empty() && std::filesystem::exists(o.file)) {
    throw std::runtime_error("-f " + o.file +
                             " exists: fastk never writes over an earlier calibration; remove "
                             "it or choose another file");
  }
  const auto claim = claim_run_folder(o.config, config, "-calibration");
  const std::filesystem::path& folder = claim->path();
  const std::filesystem::path file =
      o.file.empty() ? folder / "calibration.json" : std::filesystem::path(o.file);
  calibration::Calibration c;
  // Read first: a bad file fails before minutes of measuring.
  const auto doctor_times =
      o.hosts.empty() ? calibration::HostGradients{} : calibration::read_host_gradients(o.hosts);
  c.host = host_name();
  c.cpus = os::usable_cpus();
  c.model = learning::to_string(config.model.kind);
  c.batch_size = config.optimizer.batch_size;
  const topology::Topology topo = topology::build_topology(config.topology);
  c.reference_peers = topo.graph.size();
  c.reference_iterations = o.reference_iterations;

  std::cout << "fastk calibrate: timing gradients, updates and messages..." << std::endl;
  const auto gradients = measure::measure_gradients(config, o.repeats);
  c.gradient_s = gradients.plain_s;
  c.gradient_noise_s = gradients.with_noise_s;
  c.loss_per_sample_s = gradients.loss_per_sample_s;
  c.parameters = gradients.parameters;
  const auto update = measure::measure_update(c.parameters, o.repeats, config.optimizer);
  c.update_s = update.base_s;
  c.direction_s = update.direction_s;
  c.update_per_term_s = update.per_term_s;
  c.disagreement_per_term_s = update.disagreement_per_term_s;
  int degree = 1;
  for (int i = 0; i < topo.graph.size(); ++i) {
    degree = std::max(degree, static_cast<int>(topo.graph.neighbors(i).size()));
  }
  c.adaptive_decision_s = measure::measure_adaptive_decision(degree, o.repeats);
  const auto compression_times = measure::measure_compression(
      c.parameters, config.consensus.protocol.compression.value_or(compression::CompressorSpec{}),
      o.repeats);
  for (const auto& [kind, t] : compression_times) c.compression[kind] = {t.compress_s, t.apply_s};
  const double one_way_s = measure::measure_message_round_trip_s(
      config.cluster.local_transport,
      needs_curve(config.security, config.cluster, topo.graph.size()), c.parameters, 300);

  std::cout << "fastk calibrate: reference runs of " << c.reference_peers << " peers, "
            << o.reference_iterations << " iterations, policy full..." << std::endl;
  // The references use the base gradient time just measured, from a partial file of their
  // own: the calibration file itself is written only once it is complete.
  const std::filesystem::path partial = folder / "calibration-partial.json";
  calibration::write_calibration(partial, c);
  claim->keep();  // the reference runs' outputs stay: a failure message points at them
  struct sigaction action {};
  action.sa_handler = [](int) { g_interrupted = true; };
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  c.reference_iteration_s =
      reference_iteration_s(o, "{}", partial, folder / "calibration-reference-a");
  c.reference_b_iteration_s = reference_iteration_s(o, calibration::reference_b_stragglers_toml(),
                                                    partial, folder / "calibration-reference-b");
  std::filesystem::remove(partial);
  c = calibration::fit_costs(c, config, one_way_s);
  c.host_gradient_s = host_gradients(o, doctor_times, c.gradient_s, config);
  calibration::write_calibration(file, c);
  print_calibration(c, file);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure what running a config's peers costs on this machine (for fastk sim "
      "--calibration, and fastk run/node --calibration)");
  cmd->footer(
      "Times one gradient of the config's model (plain and with the adaptive policy's noise\n"
      "estimate), the update, the adaptive decision and a message round trip, then runs the\n"
      "config's peers for real (policy full, no stragglers) and fits the CPU a message costs\n"
      "so that `fastk sim --calibration FILE` takes as long per iteration; a second real run\n"
      "(peer 0 always 8x slow) checks the result. docs/simulation.md.");
  add_config_options(cmd, options->config);
  cmd->add_option(
      "-f,--file", options->file,
      "Where to write the calibration, a new file (default: <run folder>/calibration.json; "
      "the run folder is <run.output>/<run.name>-calibration unless --output)");
  cmd->add_option("--reference-iterations", options->reference_iterations,
                  "Iterations of each of the two reference runs (default 400)")
      ->check(CLI::Range(20, 1'000'000));
  cmd->add_option("--repeats", options->repeats,
                  "Timings of the gradient, the update and the decision (default 60; the "
                  "message round trip always takes 300)")
      ->check(CLI::Range(5, 100'000));
  cmd->add_option("--hosts", options->hosts,
                  "A `fastk doctor --hosts-json` file: each [cluster] host's own gradient time, "
                  "so that `fastk sim` predicts a LAN of unlike machines (docs/simulation.md)")
      ->check(CLI::ExistingFile);
  cmd->callback([options] { run_calibrate(*options); });
}

}  // namespace fastk::node
