// One reader per config table, each in its own file, so tables grow independently.
#pragma once

#include <filesystem>

#include "node/config/experiment_config.h"
#include "node/config/table_reader.h"

namespace fastk::node {

void read_run_table(TableReader& table, RunConfig& run);
// `seed_default` is used when the table sets no seed (the run's master seed).
void read_topology_table(TableReader& table, topology::TopologySpec& spec,
                         std::uint64_t seed_default, const std::filesystem::path& base_dir);
// `peer_count` 0: not known yet (edge-list file), so endpoint counts are checked later.
void read_cluster_table(TableReader& table, ClusterConfig& cluster, int peer_count);

void read_consensus_table(TableReader& table, ConsensusConfig& config);
// After [consensus]: the code goes into config.protocol.coding.
void read_coding_table(TableReader& table, ConsensusConfig& config,
                       const topology::TopologySpec& topology);
// `seed_default` is used when the table sets no seed (the run's master seed).
void read_stragglers_table(TableReader& table, stragglers::DelaySpec& spec,
                           std::uint64_t seed_default);

// [data], [model], [optimizer]: seeds default to `seed_default` (the run's master seed).
void read_data_table(TableReader& table, learning::DataSpec& spec, std::uint64_t seed_default,
                     const std::filesystem::path& base_dir);
void read_model_table(TableReader& table, learning::ModelSpec& spec, std::uint64_t seed_default);
void read_optimizer_table(TableReader& table, learning::OptimizerSpec& spec,
                          std::uint64_t seed_default);

// `base_dir` resolves a relative calibration path.
void read_sim_table(TableReader& table, SimSettings& settings,
                    const std::filesystem::path& base_dir);

// A relative path in a config is relative to the config file's folder.
std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir);

}  // namespace fastk::node
