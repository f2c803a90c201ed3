#include "node/cli/config_options.h"

#include <iostream>

namespace fastk::node {

void add_config_options(CLI::App* cmd, ConfigOptions& options, bool writes_run_folder) {
  cmd->add_option("config", options.config, "Experiment config (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "--set", options.overrides,
         "Override a config key, e.g. --set consensus.policy=full --set run.iterations=200 "
         "(TOML values; a bare word is a string; repeatable)")
      ->allow_extra_args(false);  // one value per --set, so CONFIG may follow
  if (writes_run_folder) {
    cmd->add_option(
        "-o,--output", options.output,
        "Run folder, new or empty (default: <run.output>/<run.name> of the config, with the "
        "command's suffix; numbered -2, -3, ... when that folder holds a run)");
  }
}

ExperimentConfig load_config(const ConfigOptions& options) {
  return load_config(options.config, options.overrides);
}

std::filesystem::path run_folder(const ConfigOptions& options, const ExperimentConfig& config) {
  if (!options.output.empty()) return options.output;
  return std::filesystem::path(config.run.output) / config.run.name;
}

std::unique_ptr<ClaimedRunFolder> claim_run_folder(const ConfigOptions& options,
                                                   const ExperimentConfig& config,
                                                   const std::string& suffix) {
  const std::filesystem::path default_dir =
      std::filesystem::path(config.run.output) / (config.run.name + suffix);
  return std::make_unique<ClaimedRunFolder>(options.output, default_dir, std::cout);
}

}  // namespace fastk::node
