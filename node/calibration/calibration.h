// What running peers costs on one machine, measured by `fastk calibrate` and kept in a JSON
// file: the time of one gradient of the config's model (the base an injected slowdown
// multiplies, in real peers and in the simulator alike), of one update, the CPU each message
// costs the I/O thread, and the latency of a message. `fastk sim --calibration FILE`
// simulates a run on such a machine (simulation::MachineCosts); `fastk run` gives its peers
// the base gradient time. How each figure is measured: docs/simulation.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "compression/compressor.h"
#include "compression/error_reset.h"
#include "node/config/experiment_config.h"
#include "simulation/machine_costs.h"

namespace fastk::node::calibration {

struct Calibration {
  // Where and what was measured.
  std::string host;
  int cpus = 0;       // CPUs the measuring process could use
  std::string model;  // learning::to_string of the model kind
  std::size_t parameters = 0;
  int batch_size = 0;
  // Medians, seconds of one core, the CPU to itself.
  double gradient_s = 0;        // one plain gradient
  double gradient_noise_s = 0;  // the same with the adaptive policy's noise estimate
  // One sample's forward pass and loss, what [consensus] validate costs per model and sample
  // (MachineCosts::loss_cpu_s_per_sample). Optional in the file: 0 in one that predates it.
  double loss_per_sample_s = 0;
  double update_s = 0;           // the update (mix and step), base...
  double update_per_term_s = 0;  // ... plus this per neighbour model mixed
  // The local step's direction pass (momentum, weight decay: docs/protocol.md §3.7), with the
  // calibrated config's optimizer, or momentum 0.9 when it had neither; charged per update
  // to configs that have them, so one calibration serves runs with and without.
  double direction_s = 0;
  double adaptive_decision_s = 0;      // the adaptive policy's decide(), full window
  double disagreement_per_term_s = 0;  // its disagreement estimate, per model, when computed
  // Messages: CPU of the I/O thread at each end, and the wall time of one message between
  // two idle peers beyond it (ping-pong on this machine's transport).
  double message_s = 0;
  double latency_s = 0;
  // Compressed gossip, per compressor (compression::to_string of the kind), measured with the
  // calibrated config's [compression] parameters (chunk, levels, fraction) or the defaults:
  // the owner's step of its estimate and a neighbour's. Empty in files of fastk before it.
  struct CompressionCosts {
    double compress_s = 0;
    double apply_s = 0;
  };
  std::map<std::string, CompressionCosts> compression;
  // A LAN of unlike machines: each host's own gradient time (by [cluster] host, as `fastk
  // doctor --hosts-json` measured it with the binary that host runs), from `fastk calibrate
  // --hosts`. A peer on such a host computes gradient_s times its host's over gradient_s
  // (MachineCosts::gradient_scale); peers on hosts not listed, as this machine. Empty: every
  // host like this one.
  std::map<std::string, double> host_gradient_s;
  // message_s is fitted to a real run of the config's peers, policy full, without
  // stragglers (A); a second one, with peer 0 always 8x slow so that the others mostly wait
  // for it (B), checks the fitted simulator on a run it was not fitted to. Training phase
  // per iteration, measured and simulated.
  int reference_peers = 0;
  std::int64_t reference_iterations = 0;
  double reference_iteration_s = 0;
  double reference_simulated_s = 0;
  double reference_b_iteration_s = 0;
  double reference_b_simulated_s = 0;
};

nlohmann::ordered_json to_json(const Calibration& c);

// A `fastk doctor --hosts-json` file: each host's gradient time, and the launching machine's
// (where `fastk calibrate` runs) if the doctor timed it as one of the hosts.
struct HostGradients {
  std::map<std::string, double> seconds;  // by host
  std::optional<double> launching_s;
};
// Throws std::runtime_error naming the file and what is wrong with it.
HostGradients read_host_gradients(const std::filesystem::path& path);

// Calibration::host_gradient_s from the doctor's times: each host's time over the launching
// machine's, both the doctor's, times `gradient_s` (this machine's, as calibrate measured it),
// so that a peer on the launching machine computes as calibrated. Without the launching
// machine's time, the doctor's times as they are (and `warnings` says so). Hosts of `cluster`
// that the file lacks, and hosts of the file that are no host of `cluster`, are warnings too.
std::map<std::string, double> host_gradients_for(const HostGradients& doctor, double gradient_s,
                                                 const ClusterConfig& cluster,
                                                 std::vector<std::string>& warnings);
// Throws std::runtime_error naming the file and the missing or bad field.
Calibration read_calibration(const std::filesystem::path& path);
void write_calibration(const std::filesystem::path& path, const Calibration& c);

// Throws std::invalid_argument naming what differs when `c` was measured for another model
// or batch size than `config` has, or (when given, from a built model) parameter count.
void check_fits(const Calibration& c, const learning::ModelSpec& model,
                const learning::OptimizerSpec& optimizer,
                std::optional<std::size_t> parameters = std::nullopt);
// read_calibration, then check_fits against `config` (and `parameters` when given).
Calibration read_calibration_for(const std::filesystem::path& path, const ExperimentConfig& config,
                                 std::optional<std::size_t> parameters = std::nullopt);

// The costs of a run's peers on machines like the calibrated one: peers on this machine
// share its cpus in the blocks [cluster] bind_cpus gives them (or all of them, unbound);
// peers on other hosts likewise on each host, assumed alike. Peers whose blocks overlap
// (more CPUs than peers, unevenly) count as separate groups: an approximation.
// `optimizer`: the update is charged the direction pass when it has momentum or weight decay.
// `compression`: the run's compressor, charged from c.compression, and with `error_reset`
// the reset's for differences of its kind; throws std::invalid_argument if the calibration
// has no costs for one of them.
simulation::MachineCosts machine_costs(
    const Calibration& c, const topology::TopologySpec& topology, const ClusterConfig& cluster,
    const consensus::PolicySpec& policy, const learning::OptimizerSpec& optimizer,
    const std::optional<compression::CompressorSpec>& compression = std::nullopt,
    const std::optional<compression::ErrorReset>& error_reset = std::nullopt);

}  // namespace fastk::node::calibration
