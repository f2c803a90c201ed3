// The experiment config: one TOML file, parsed here (the only place TOML++ is used) into
// plain structs that the pure libraries take. Defaults and meanings of every key are
// documented in experiments/configs/README.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "consensus/peer_protocol.h"
#include "learning/specs.h"
#include "node/config/cluster.h"
#include "node/sim/sim_settings.h"
#include "node/stragglers/delay_spec.h"
#include "topology/topology.h"

namespace fastk::node {

// [run]
struct RunConfig {
  std::string name = "fastk";      // run name; the output folder is <output>/<name>
  std::uint64_t seed = 1;          // master seed; other seeds default to it
  std::int64_t iterations = 1000;  // iterations per peer
  std::string output = "runs";     // output folder (relative: to the working directory)
};

// [consensus]. protocol.iterations and protocol.learning_rate are filled in by the runtime
// from [run] and the optimizer.
struct ConsensusConfig {
  consensus::ProtocolConfig protocol;
  int micro_batches = 4;  // gradient split for the adaptive policy's noise estimates
};

struct ExperimentConfig {
  std::string source;  // file the config came from ("<string>" for text)
  RunConfig run;
  topology::TopologySpec topology;    // [topology]; relative paths resolved against the file
  learning::DataSpec data;            // [data]; seed defaults to run.seed
  learning::ModelSpec model;          // [model]; init seed defaults to run.seed
  learning::OptimizerSpec optimizer;  // [optimizer]; sampling seed defaults to run.seed
  ConsensusConfig consensus;          // [consensus]
  stragglers::DelaySpec stragglers;   // [stragglers]
  ClusterConfig cluster;              // [cluster]
  sim::SimSettings sim;               // [sim]
};

// Throws ConfigError listing every problem with its TOML path (syntax errors with line and
// column), or when the file cannot be read.
ExperimentConfig load_config(const std::filesystem::path& path);
// `base_dir` resolves relative file paths inside the config.
ExperimentConfig parse_config(std::string_view text, const std::string& source,
                              const std::filesystem::path& base_dir);

}  // namespace fastk::node
