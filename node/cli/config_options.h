// What every command that reads an experiment config takes: the file, --set overrides of its
// keys and --output for the run folder. One place, so `run`, `sim`, `node`, `train` and
// `calibrate` read configs and name folders the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/launch/claimed_run_folder.h"

namespace fastk::node {

struct ConfigOptions {
  std::string config;
  std::vector<std::string> overrides;  // --set table.key=value, in order
  std::string output;                  // --output: the run folder; empty: run.output/run.name
};

// Adds CONFIG, --set and (for commands that write a run folder) --output to `cmd`, filling
// `options` when it parses.
void add_config_options(CLI::App* cmd, ConfigOptions& options, bool writes_run_folder = true);

// The config with its overrides (throws ConfigError naming every problem).
ExperimentConfig load_config(const ConfigOptions& options);

// --output, or <run.output>/<run.name>: where `fastk node` (a peer of a launch) writes.
std::filesystem::path run_folder(const ConfigOptions& options, const ExperimentConfig& config);

// The folder a command that starts a run of its own writes: --output, or
// <run.output>/<run.name><suffix> (suffix "" for `fastk run`, "-sim", "-calibration",
// "-train", "-sweep"), never one holding another run's files (claimed_run_folder.h). Moves
// to a numbered folder are reported on stdout.
std::unique_ptr<ClaimedRunFolder> claim_run_folder(const ConfigOptions& options,
                                                   const ExperimentConfig& config,
                                                   const std::string& suffix);

}  // namespace fastk::node
