// fastk keys DIR (--peers N | --config CONFIG): a CURVE key pair per peer (docs/security.md),
// for peers started by hand, mpirun or srun. `fastk run` makes its own keys for runs that need them
// (security.h).
#include <iostream>

#include "node/cli/commands.h"
#include "node/config/experiment_config.h"
#include "node/transport/curve_keys.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

struct KeysOptions {
  std::string folder;
  int peers = 0;
  std::string config;
  std::vector<std::string> overrides;
};

void make_keys(const KeysOptions& o) {
  int peers = o.peers;
  if (!o.config.empty()) {
    peers = topology::build_topology(load_config(o.config, o.overrides).topology).graph.size();
  }
  const std::string folder = std::filesystem::absolute(o.folder).lexically_normal().string();
  transport::write_key_folder(folder, peers);
  std::cout << "fastk keys: a key pair for each of " << peers << " peers in " << folder
            << "\n  public-keys          every peer's public key (each peer needs this file)\n"
            << "  peer-<i>.secret      peer i's secret key, mode 0600 (only peer i's host "
               "needs it)\n"
            << "Use it with [security] keys = \"" << folder << "\" or `fastk node --keys " << folder
            << "`." << std::endl;
}

}  // namespace

void add_keys_command(CLI::App& app) {
  auto options = std::make_shared<KeysOptions>();
  CLI::App* cmd =
      app.add_subcommand("keys", "Make the CURVE keys that encrypt and authenticate a run's links");
  cmd->footer(
      "Peers with keys accept frames only from their neighbours' keys (docs/security.md).\n"
      "`fastk run` makes keys itself for runs over TCP (between hosts, or local_transport =\n"
      "\"tcp\") and with curve = \"on\"; make them here for peers you start with `fastk node`,\n"
      "mpirun or srun, and put the folder where every host reads it:\n"
      "  fastk keys lan-keys --config experiments/configs/lan.toml");
  cmd->add_option("DIR", options->folder, "The folder to create (mode 0700); must hold no keys")
      ->required();
  auto* peers =
      cmd->add_option("--peers", options->peers, "How many peers")->check(CLI::Range(1, 1 << 20));
  auto* config = cmd->add_option("--config", options->config, "Take the peer count from a config")
                     ->check(CLI::ExistingFile);
  cmd->add_option("--set", options->overrides, "table.key=value over the config (repeatable)")
      ->needs(config);
  peers->excludes(config);
  cmd->callback([options, peers, config] {
    if (peers->count() == 0 && config->count() == 0) {
      throw CLI::ValidationError("fastk keys", "give --peers N or --config CONFIG");
    }
    make_keys(*options);
  });
}

}  // namespace fastk::node
