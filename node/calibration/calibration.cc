#include "node/calibration/calibration.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "consensus/backup_policy.h"
#include "learning/sgd.h"
#include "node/config/cluster.h"
#include "node/metrics/output_files.h"
#include "node/os/cpu_binding.h"
#include "topology/topology.h"

namespace fastk::node::calibration {
namespace {

// The fields, named once for writing and reading.
template <typename Visit>
void fields(Calibration& c, Visit visit) {
  visit("host", c.host);
  visit("cpus", c.cpus);
  visit("model", c.model);
  visit("parameters", c.parameters);
  visit("batch_size", c.batch_size);
  visit("gradient_s", c.gradient_s);
  visit("gradient_noise_s", c.gradient_noise_s);
  visit("update_s", c.update_s);
  visit("update_per_term_s", c.update_per_term_s);
  visit("direction_s", c.direction_s);
  visit("adaptive_decision_s", c.adaptive_decision_s);
  visit("disagreement_per_term_s", c.disagreement_per_term_s);
  visit("message_s", c.message_s);
  visit("latency_s", c.latency_s);
  visit("reference_peers", c.reference_peers);
  visit("reference_iterations", c.reference_iterations);
  visit("reference_iteration_s", c.reference_iteration_s);
  visit("reference_simulated_s", c.reference_simulated_s);
  visit("reference_b_iteration_s", c.reference_b_iteration_s);
  visit("reference_b_simulated_s", c.reference_b_simulated_s);
}

// The host a peer runs on, as its neighbours reach it ("" for this machine's ipc sockets).
std::string host_of(const ClusterConfig& cluster, int peers, int peer) {
  const auto endpoint = parse_tcp_endpoint(peer_endpoints(cluster, peers, peer).connect);
  return endpoint ? endpoint->host : "";
}

// The "compression" object: {"int8": {"compress_s": .., "apply_s": ..}, ...}; optional.
std::map<std::string, Calibration::CompressionCosts> read_compression_costs(
    const nlohmann::json& j, const std::filesystem::path& path) {
  std::map<std::string, Calibration::CompressionCosts> costs;
  const auto it = j.find("compression");
  if (it == j.end()) return costs;
  const auto bad = [&](const std::string& what) {
    return std::runtime_error(path.string() + ": field 'compression' " + what);
  };
  if (!it->is_object()) throw bad("is not an object");
  for (const auto& [kind, entry] : it->items()) {
    compression::parse_kind(kind);  // throws, naming the kinds there are
    Calibration::CompressionCosts k;
    for (auto [name, value] : {std::pair{"compress_s", &k.compress_s}, {"apply_s", &k.apply_s}}) {
      const auto v = entry.find(name);
      if (!entry.is_object() || v == entry.end() || !v->is_number() || !(*v >= 0)) {
        throw bad("has no non-negative " + std::string(name) + " for " + kind);
      }
      *value = v->get<double>();
    }
    costs[kind] = k;
  }
  return costs;
}

}  // namespace

nlohmann::ordered_json to_json(const Calibration& c) {
  nlohmann::ordered_json j;
  Calibration copy = c;
  fields(copy, [&](const char* name, auto& value) { j[name] = value; });
  for (const auto& [kind, k] : c.compression) {
    j["compression"][kind] = {{"compress_s", k.compress_s}, {"apply_s", k.apply_s}};
  }
  for (const auto& [host, s] : c.host_gradient_s) j["host_gradient_s"][host] = s;
  j["loss_per_sample_s"] = c.loss_per_sample_s;
  return j;
}

HostGradients read_host_gradients(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read hosts file '" + path.string() + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const auto bad = [&](const std::string& what) {
    return std::runtime_error(path.string() + ": " + what +
                              " (a file of `fastk doctor --hosts-json`?)");
  };
  if (j.is_discarded()) throw bad("not JSON");
  if (!j.is_object() || !j.contains("hosts") || !j["hosts"].is_array()) {
    throw bad("no \"hosts\" list");
  }
  HostGradients times;
  for (const auto& h : j["hosts"]) {
    const auto host = h.find("host");
    const auto s = h.find("gradient_s");
    if (!h.is_object() || host == h.end() || !host->is_string() || s == h.end() ||
        !s->is_number() || !(*s > 0)) {
      throw bad("every host needs a \"host\" and a positive \"gradient_s\"");
    }
    const auto name = host->get<std::string>();
    if (!times.seconds.emplace(name, s->get<double>()).second) {
      throw bad("host " + name + " is listed twice");
    }
    if (h.value("launching_machine", false)) times.launching_s = s->get<double>();
  }
  if (times.seconds.empty()) throw bad("no host with a gradient time");
  return times;
}

std::map<std::string, double> host_gradients_for(const HostGradients& doctor, double gradient_s,
                                                 const ClusterConfig& cluster,
                                                 std::vector<std::string>& warnings) {
  std::map<std::string, double> relative;
  for (const auto& [host, s] : doctor.seconds) {
    relative[host] = doctor.launching_s ? s / *doctor.launching_s * gradient_s : s;
    if (std::find(cluster.hosts.begin(), cluster.hosts.end(), host) == cluster.hosts.end()) {
      warnings.push_back("the hosts file's " + host + " is no host of [cluster]: not used");
    }
  }
  for (const auto& host : cluster.hosts) {
    if (!doctor.seconds.contains(host)) {
      warnings.push_back("the hosts file has no gradient time of " + host +
                         " (its gradient failed, or another doctor run): its peers compute as "
                         "this machine");
    }
  }
  if (!doctor.launching_s) {
    warnings.push_back(
        "the doctor did not time this machine (it is no [cluster] host): the hosts' times are "
        "compared with this calibration's own, taken at another moment");
  }
  return relative;
}

Calibration read_calibration(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read calibration file '" + path.string() + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw std::runtime_error(path.string() + ": not a JSON object (a `fastk calibrate` file?)");
  }
  Calibration c;
  if (const auto hosts = j.find("host_gradient_s"); hosts != j.end()) {
    for (const auto& [host, v] : hosts->items()) {
      if (!v.is_number() || !(v > 0)) {
        throw std::runtime_error(path.string() + ": host_gradient_s of " + host +
                                 " is not a positive number");
      }
      c.host_gradient_s[host] = v.get<double>();
    }
  }
  fields(c, [&](const char* name, auto& value) {
    using T = std::decay_t<decltype(value)>;
    const auto it = j.find(name);
    constexpr bool text = std::is_same_v<T, std::string>;
    constexpr bool whole = std::is_integral_v<T>;
    const bool ok = it != j.end() && (text    ? it->is_string()
                                      : whole ? it->is_number_integer() && *it >= 0 &&
                                                    *it <= std::numeric_limits<T>::max()
                                              : it->is_number());
    if (!ok) {
      throw std::runtime_error(path.string() + ": field '" + name + "' is missing or not a " +
                               (text    ? "string"
                                : whole ? "non-negative whole number"
                                        : "number"));
    }
    value = it->template get<T>();
  });
  for (double v : {c.gradient_s, c.gradient_noise_s, c.update_s, c.update_per_term_s, c.direction_s,
                   c.adaptive_decision_s, c.disagreement_per_term_s, c.message_s, c.latency_s}) {
    if (!(v >= 0)) throw std::runtime_error(path.string() + ": a time is negative or not a number");
  }
  if (!(c.gradient_s > 0) || c.cpus < 1) {
    throw std::runtime_error(path.string() + ": gradient_s must be > 0 and cpus >= 1");
  }
  if (const auto loss = j.find("loss_per_sample_s"); loss != j.end()) {
    if (!loss->is_number() || !(*loss >= 0)) {
      throw std::runtime_error(path.string() + ": loss_per_sample_s is not a number >= 0");
    }
    c.loss_per_sample_s = loss->get<double>();
  }
  try {
    c.compression = read_compression_costs(j, path);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path.string() + ": field 'compression': " + e.what());
  }
  return c;
}

Calibration read_calibration_for(const std::filesystem::path& path, const ExperimentConfig& config,
                                 std::optional<std::size_t> parameters) {
  Calibration c = read_calibration(path);
  check_fits(c, config.model, config.optimizer, parameters);
  return c;
}

void write_calibration(const std::filesystem::path& path, const Calibration& c) {
  metrics::write_json_file(path, to_json(c));
}

void check_fits(const Calibration& c, const learning::ModelSpec& model_spec,
                const learning::OptimizerSpec& optimizer, std::optional<std::size_t> parameters) {
  const std::string model = learning::to_string(model_spec.kind);
  std::string differs;
  if (c.model != model) differs += " model " + c.model + " (the config has " + model + ")";
  if (c.batch_size != optimizer.batch_size) {
    differs += " batch size " + std::to_string(c.batch_size) + " (the config has " +
               std::to_string(optimizer.batch_size) + ")";
  }
  if (parameters && *parameters != c.parameters) {
    differs += " " + std::to_string(c.parameters) + " parameters (the config's model has " +
               std::to_string(*parameters) + ")";
  }
  if (!differs.empty()) {
    throw std::invalid_argument("the calibration was measured for" + differs +
                                "; run `fastk calibrate` on this config");
  }
}

namespace {

// The calibration's costs of compressor `kind`; throws std::invalid_argument if it has none.
const Calibration::CompressionCosts& compression_costs(const Calibration& c,
                                                       compression::Kind kind) {
  const std::string name = compression::to_string(kind);
  const auto it = c.compression.find(name);
  if (it == c.compression.end()) {
    throw std::invalid_argument("the calibration has no costs of compression kind " + name +
                                " (it predates their measurement); run `fastk calibrate` again");
  }
  return it->second;
}

}  // namespace

simulation::MachineCosts machine_costs(
    const Calibration& c, const topology::TopologySpec& topology, const ClusterConfig& cluster,
    const consensus::PolicySpec& policy, const learning::OptimizerSpec& optimizer,
    const std::optional<compression::CompressorSpec>& compression,
    const std::optional<compression::ErrorReset>& error_reset) {
  const auto rule = consensus::make_policy(policy);
  simulation::MachineCosts costs;
  costs.gradient_cpu_s = c.gradient_s;
  costs.gradient_stats_cpu_s = c.gradient_noise_s;
  costs.loss_cpu_s_per_sample = c.loss_per_sample_s;
  costs.receive_s = c.message_s;
  costs.send_s = c.message_s;
  costs.update_s = c.update_s + (learning::has_direction_state(optimizer) ? c.direction_s : 0.0);
  costs.decision_s = rule->costly_decision() ? c.adaptive_decision_s : 0.0;
  // The disagreement pass, every disagreement_every updates: charged on average.
  costs.update_per_term_s =
      c.update_per_term_s +
      (rule->wants_disagreement() ? c.disagreement_per_term_s / policy.disagreement_every : 0.0);
  costs.latency_s = c.latency_s;
  if (compression) {
    const Calibration::CompressionCosts& each = compression_costs(c, compression->kind);
    costs.compress_s = each.compress_s;
    costs.apply_difference_s = each.apply_s;
  }
  if (compression && error_reset) {
    const Calibration::CompressionCosts& reset = compression_costs(c, error_reset->spec.kind);
    costs.reset_kind = error_reset->spec.kind;
    costs.reset_compress_s = reset.compress_s;
    costs.reset_apply_difference_s = reset.apply_s;
  }
  // Groups of cores: one per host and CPU block, as the peers would bind themselves.
  const int n = topology::build_topology(topology).graph.size();
  std::vector<int> cpus(static_cast<std::size_t>(c.cpus));
  std::iota(cpus.begin(), cpus.end(), 0);
  std::map<std::pair<std::string, std::vector<int>>, int> group_of;
  for (int i = 0; i < n; ++i) {
    const HostShare share = host_share(cluster, n, i);
    std::vector<int> block =
        cluster.bind_cpus ? os::cpu_share(cpus, share.local_index, share.local_count) : cpus;
    const auto key = std::pair{host_of(cluster, n, i), block};
    auto [it, added] = group_of.emplace(key, static_cast<int>(costs.group_cores.size()));
    if (added) costs.group_cores.push_back(static_cast<double>(block.size()));
    costs.cpu_group.push_back(it->second);
    const auto host = c.host_gradient_s.find(host_of(cluster, n, i));
    costs.gradient_scale.push_back(host == c.host_gradient_s.end() ? 1.0
                                                                   : host->second / c.gradient_s);
  }
  return costs;
}

}  // namespace fastk::node::calibration
