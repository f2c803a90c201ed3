// One reader per config table, each in its own file, so tables grow independently.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/config/table_reader.h"

namespace fastk::node {

void read_run_table(TableReader& table, RunConfig& run);
// `seed_default` is used when the table sets no seed (the run's master seed).
void read_topology_table(TableReader& table, topology::TopologySpec& spec,
                         std::uint64_t seed_default, const std::filesystem::path& base_dir);
// `peer_count` 0: not known yet (edge-list file), so endpoint counts are checked later.
void read_cluster_table(TableReader& table, ClusterConfig& cluster, int peer_count);

void read_consensus_table(TableReader& table, ConsensusConfig& config,
                          const topology::TopologySpec& topology);
// After [consensus] and [coding]: the compressor goes into config.protocol.compression.
// Needs the topology: compressed gossip runs only on a static undirected graph with
// symmetric weights.
void read_compression_table(TableReader& table, ConsensusConfig& config,
                            const topology::TopologySpec& topology);
// After [consensus]: the code goes into config.protocol.coding.
void read_coding_table(TableReader& table, ConsensusConfig& config,
                       const topology::TopologySpec& topology);
// `seed_default` is used when the table sets no seed (the run's master seed).
void read_stragglers_table(TableReader& table, stragglers::DelaySpec& spec,
                           std::uint64_t seed_default);

// [data], [model], [optimizer]: seeds default to `seed_default` (the run's master seed).
void read_data_table(TableReader& table, learning::DataSpec& spec, std::uint64_t seed_default,
                     const std::filesystem::path& base_dir);
void read_model_table(TableReader& table, learning::ModelSpec& spec, std::uint64_t seed_default,
                      const std::filesystem::path& base_dir);
void read_optimizer_table(TableReader& table, learning::OptimizerSpec& spec,
                          std::uint64_t seed_default);

// `base_dir` resolves a relative key folder.
void read_security_table(TableReader& table, SecurityConfig& security,
                         const std::filesystem::path& base_dir);

// `base_dir` resolves a relative calibration path.
void read_sim_table(TableReader& table, SimSettings& settings,
                    const std::filesystem::path& base_dir);

// Each table as JSON under its TOML keys, as resolved (defaults filled in): every key its
// reader reads (tests/unit/node/config_echo_test.cc checks that), for resolved_config.json.
nlohmann::ordered_json run_table_json(const RunConfig& run, double eval_interval_s);
nlohmann::ordered_json topology_table_json(const topology::TopologySpec& spec, int peers);
nlohmann::ordered_json cluster_table_json(const ClusterConfig& cluster);
nlohmann::ordered_json consensus_table_json(const ConsensusConfig& config);
nlohmann::ordered_json coding_table_json(const ConsensusConfig& config);
nlohmann::ordered_json compression_table_json(const ConsensusConfig& config);
nlohmann::ordered_json stragglers_table_json(const stragglers::DelaySpec& spec);
nlohmann::ordered_json data_table_json(const learning::DataSpec& spec);
nlohmann::ordered_json model_table_json(const learning::ModelSpec& spec);
nlohmann::ordered_json optimizer_table_json(const learning::OptimizerSpec& spec);
nlohmann::ordered_json sim_table_json(const SimSettings& settings);
nlohmann::ordered_json security_table_json(const SecurityConfig& security);

// [attack]: the attackers go into config.protocol.attack (after [consensus]).
void read_attack_table(TableReader& table, ConsensusConfig& config,
                       const topology::TopologySpec& topology);
nlohmann::ordered_json attack_table_json(const ConsensusConfig& config);

// [churn]: after [consensus] (a run that cannot take a peer back refuses it) and with the
// topology's size. `base_dir` resolves a relative file.
void read_churn_table(TableReader& table, ExperimentConfig& config,
                      const std::filesystem::path& base_dir);
nlohmann::ordered_json churn_table_json(const ChurnConfig& churn);

// Reads an array of strings; records an error naming the element that is not a string.
void read_string_list(TableReader& t, std::string_view key, std::vector<std::string>& out);

// Reads an array of numbers at `key`; records an error naming the element otherwise.
template <typename T>
std::vector<T> read_numbers(TableReader& t, std::string_view key) {
  std::vector<T> values;
  const toml::node* n = t.node(key);
  if (n == nullptr) return values;
  const toml::array* array = n->as_array();
  if (array == nullptr) {
    t.errors().add(t.path_of(key), "expected an array of numbers");
    return values;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const std::string where = t.path_of(key) + "[" + std::to_string(i) + "]";
    if constexpr (std::is_integral_v<T>) {
      if (const auto v = element.value_exact<std::int64_t>()) {
        values.push_back(static_cast<T>(*v));
        continue;
      }
      t.errors().add(where, "expected an integer");
    } else {
      if (const auto v = element.value<double>()) {
        values.push_back(*v);
        continue;
      }
      t.errors().add(where, "expected a number");
    }
  }
  return values;
}

// A relative path in a config is relative to the config file's folder.
std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir);

}  // namespace fastk::node
