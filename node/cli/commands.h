// Subcommands of the `fastk` executable, one file each. Each add_*_command registers its
// subcommand, flags and callback on the top-level app.
#pragma once

#include <CLI/CLI.hpp>

namespace fastk::node {

void add_sim_command(CLI::App& app);
void add_topo_command(CLI::App& app);
void add_node_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_keys_command(CLI::App& app);
void add_sweep_command(CLI::App& app);

}  // namespace fastk::node
