// fastk: decentralized (gossip) training with dynamic backup workers.
//
//   fastk topo torus --rows 4 --cols 4     graph and mixing-matrix facts
//   fastk train CONFIG                     centralized training baseline
//   fastk sim CONFIG                       every peer in virtual time (backup workers)
//   fastk run CONFIG                       every peer as a real process, then the report
//   fastk node CONFIG --id I               one real peer (what `run`, mpirun or srun start)
//   fastk calibrate CONFIG                 this machine's costs, for sim --calibration
//   fastk doctor CONFIG                    preflight of a multi-host config
//   fastk report RUN_DIR                   results of a run started by mpirun, srun or hand
//   fastk sweep CONFIG --vary K=V1,V2      every combination, compared over seeds
//   fastk <command> --help                 flags of each command
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string>

#include "node/cli/commands.h"
#include "node/doctor/host_check.h"
#include "node/os/fatal_signals.h"

namespace {

// FASTK_PARSE_ONLY=1: parse the command line (subcommand, flags, their checks) and do nothing
// else, so that a test can check every command the README shows without running it.
bool parse_only() {
  const char* value = std::getenv("FASTK_PARSE_ONLY");
  return value != nullptr && std::string(value) != "" && std::string(value) != "0";
}

}  // namespace

int main(int argc, char** argv) {
  // A crash says which signal, where, and on which instruction sets (fatal_signals.h).
  fastk::node::os::report_fatal_signals(fastk::node::os::instruction_set_context());
  CLI::App app{"fastk: decentralized training with dynamic backup workers", "fastk"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fastk::node::doctor::kVersion);
  fastk::node::add_sim_command(app);
  fastk::node::add_topo_command(app);
  fastk::node::add_node_command(app);
  fastk::node::add_run_command(app);
  fastk::node::add_train_command(app);
  fastk::node::add_calibrate_command(app);
  fastk::node::add_doctor_command(app);
  fastk::node::add_report_command(app);
  fastk::node::add_keys_command(app);
  fastk::node::add_sweep_command(app);
  // Runs once the whole line has parsed, before any subcommand's callback; the commands'
  // options stay owned by their callbacks, so those must stay in place.
  if (parse_only()) app.parse_complete_callback([] { throw CLI::Success(); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "fastk: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
