// fastk doctor CONFIG: checks, before a multi-host run, everything that would stop it or
// spoil it (node/doctor/doctor.h); `--agent HOST` is the part it starts on each host.
#include <iostream>

#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/doctor/agent.h"
#include "node/doctor/doctor.h"

namespace fastk::node {
namespace {

struct DoctorCommandOptions {
  ConfigOptions config;
  doctor::DoctorOptions doctor;
  double probe_mb = 4;
  int probe_timeout_ms = 3000;
  std::string agent_host;
  bool time_gradient = false;
};

int run_doctor_command(const DoctorCommandOptions& o) {
  const ExperimentConfig config = load_config(o.config);
  if (o.time_gradient) return doctor::time_gradient(config, std::cout);
  if (!o.agent_host.empty()) {
    return doctor::run_agent({.config_path = o.config.config,
                              .overrides = o.config.overrides,
                              .host = o.agent_host,
                              .time_gradient = o.doctor.measure_gradient},
                             config, std::cin, std::cout);
  }
  doctor::DoctorOptions options = o.doctor;
  options.config_path = o.config.config;
  options.overrides = o.config.overrides;
  options.probe_bytes = static_cast<std::int64_t>(o.probe_mb * (1 << 20));
  options.probe_timeout = std::chrono::milliseconds(o.probe_timeout_ms);
  return doctor::run_doctor(options, config, std::cout);
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto options = std::make_shared<DoctorCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Check a multi-host config before running it: ssh, builds, files, ports, links");
  cmd->footer(
      "For every host of [cluster]: ssh login (BatchMode, in this working directory, as fastk\n"
      "run does), the same fastk build, the config and data files present and identical to\n"
      "this machine's, every peer's port free, the instruction sets the binary uses there and\n"
      "one gradient timed with it (a host where it would crash is a problem; a straggler by\n"
      "hardware, a note). For every graph edge between two hosts: the receiving peer's port\n"
      "reached from the sending peer's host over ZeroMQ, its round trip and bandwidth. Then the\n"
      "communication floor of one iteration beside the slowest host's gradient. Every problem\n"
      "names the host, peer and port and what to do; the exit code is 1 when there is one.");
  add_config_options(cmd, options->config, /*writes_run_folder=*/false);
  cmd->add_option("--remote-fastk", options->doctor.remote_fastk,
                  "Path of the fastk binary on remote hosts (default: this binary's path)");
  cmd->add_option("--probe-mb", options->probe_mb,
                  "Data sent over each edge to measure its bandwidth, in MiB (0: round trip "
                  "only)")
      ->check(CLI::Range(0.0, 1024.0))
      ->capture_default_str();
  cmd->add_option("--probe-timeout-ms", options->probe_timeout_ms,
                  "How long a peer's port may take to answer before the edge counts as blocked")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  cmd->add_flag("!--no-gradient", options->doctor.measure_gradient,
                "Skip timing a gradient on every host (it loads the data set there)");
  cmd->add_option("--hosts-json", options->doctor.hosts_json,
                  "Write each host's gradient time, kernels and CPU to this JSON file, for "
                  "`fastk calibrate --hosts` (a mixed LAN in `fastk sim`)");
  cmd->add_option("--agent", options->agent_host,
                  "(internal) run as the agent of this host: what the doctor starts there")
      ->group("");
  cmd->add_flag("--time-gradient", options->time_gradient,
                "(internal) time one gradient and print it: what an agent starts")
      ->group("");
  cmd->callback([options] {
    const int code = run_doctor_command(*options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fastk::node
