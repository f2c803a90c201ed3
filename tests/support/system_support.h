// Helpers of the system tests: real `fastk` processes talking over real ZeroMQ sockets on this
// machine (Unix-domain sockets by default, loopback TCP when asked). Each test gets its own
// folder (testutil::fresh_test_dir) and its own free port range, so tests can run in
// parallel under CTest.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "node/config/cluster.h"
#include "node/launch/child_process.h"
#include "node/launch/progress.h"
#include "tests/support/temp_dir.h"

namespace fastk::systest {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

// Where a peer of a local run (default [cluster]) listening on `port` is reached: the
// Unix-domain socket that replaces tcp://127.0.0.1:port.
inline std::string local_endpoint(int port) {
  return "ipc://" + node::ipc_directory() + "/127.0.0.1-" + std::to_string(port) + ".sock";
}

// Whether nothing on this machine uses `port` now: no TCP listener on loopback, and no
// Unix-domain socket of a local run named after it (a run over ipc or shm binds no TCP port,
// so a TCP check alone let a parallel test pick its ports: CI failed so, "Address already in
// use" on a .sock).
inline bool port_is_free(int port) {
  if (std::filesystem::exists(local_endpoint(port).substr(6))) return false;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return free;
}

// A base port such that base .. base + count - 1 are free now. Chosen below the kernel's
// ephemeral range, so that the peers' own outgoing connections (which take ephemeral ports)
// cannot grab a port a peer is about to bind; random, so parallel tests do not collide.
inline int free_base_port(int count) {
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  const int low = 10000;
  const int high = std::max(low + 1, ephemeral_low - count - 1);
  std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = std::uniform_int_distribution<int>(low, high)(random);
    bool all_free = true;
    for (int p = base; p < base + count && all_free; ++p) all_free = port_is_free(p);
    if (all_free) return base;
  }
  ADD_FAILURE() << "no range of " << count << " free ports found";
  return low;
}

// An experiment on a small synthetic data set: each gradient takes microseconds.
struct TinyExperiment {
  int peers = 4;
  std::string topology = "ring";  // [topology] kind
  std::string topology_extra;     // more keys of [topology]
  std::string consensus_extra;    // more keys of [consensus]
  std::int64_t iterations = 200;
  double duration_s = 0;  // run.duration_s when above 0
  std::string policy = "full";
  int m_min = 1;  // [consensus] m_min
  int base_port = 0;
  int peer_timeout_ms = 1000;
  int startup_timeout_ms = 10000;
  std::string local_transport = "shm";  // the default: Unix-domain sockets, shared memory
  std::string model = "mlp";            // "mlp" (one hidden layer of 8) or "logistic_regression"
  std::string model_extra;              // more keys of [model] (a torchscript's file)
  double separation = 4.0;              // of the data's classes: 4 is easy, 1.5 is not
  int test_samples = 200;
  int batch_size = 8;
  double lr = 0.05;
  std::string optimizer_extra;  // more keys of [optimizer]
  std::string extra;            // more TOML appended at the end
  std::string data;             // the keys of [data]; empty: the gaussian mixture below
};

// `peers` peers on a ring, with a free port range of their own.
inline TinyExperiment tiny_experiment(int peers, std::int64_t iterations,
                                      const std::string& policy = "full") {
  TinyExperiment e;
  e.peers = peers;
  e.iterations = iterations;
  e.policy = policy;
  e.base_port = free_base_port(peers);
  return e;
}

// Writes DIR/exp.toml; outputs go to DIR/runs/sys (absolute, whatever the working directory).
inline std::filesystem::path write_config(const std::filesystem::path& dir,
                                          const TinyExperiment& e) {
  const auto path = dir / "exp.toml";
  std::ofstream(path) << "[run]\nname = \"sys\"\niterations = " << e.iterations << "\noutput = \""
                      << (dir / "runs").string() << "\"\n"
                      << (e.duration_s > 0 ? "duration_s = " + std::to_string(e.duration_s) + "\n"
                                           : std::string())
                      << "[topology]\nkind = \"" << e.topology << "\"\npeers = " << e.peers << "\n"
                      << e.topology_extra << "[data]\n"
                      << (e.data.empty() ? "kind = \"gaussian_mixture\"\ntrain_samples = 800\n"
                                           "test_samples = " +
                                               std::to_string(e.test_samples) +
                                               "\ndim = 8\nclasses = 3\nseparation = " +
                                               std::to_string(e.separation) + "\n"
                                         : e.data)
                      << "[model]\nkind = \"" << e.model << "\"\n"
                      << (e.model == "mlp" ? "hidden = [8]\n" : "") << e.model_extra
                      << "[optimizer]\nlr = " << e.lr << "\nbatch_size = " << e.batch_size << "\n"
                      << e.optimizer_extra << "[consensus]\npolicy = \"" << e.policy
                      << "\"\nm_min = " << e.m_min << "\n"
                      << e.consensus_extra << "[cluster]\nbase_port = " << e.base_port
                      << "\npeer_timeout_ms = " << e.peer_timeout_ms
                      << "\nstartup_timeout_ms = " << e.startup_timeout_ms
                      << "\nlocal_transport = \"" << e.local_transport << "\"\n"
                      << e.extra;
  return path;
}

inline std::filesystem::path run_dir(const std::filesystem::path& dir) {
  return dir / "runs" / "sys";
}

// Where `fastk sim` writes for the same config (claimed_run_folder.h: never the real run's).
inline std::filesystem::path sim_dir(const std::filesystem::path& dir) {
  return dir / "runs" / "sys-sim";
}

inline std::filesystem::path peer_dir(const std::filesystem::path& run, int peer) {
  return run / "peers" / ("peer-" + std::to_string(peer));
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// `peer`'s final model in `real_run` exists and has the bits of the one in `sim_run`.
inline void expect_simulations_model(const std::filesystem::path& real_run,
                                     const std::filesystem::path& sim_run, int peer) {
  const std::string real = read_bytes(peer_dir(real_run, peer) / "model-final.f32");
  ASSERT_FALSE(real.empty()) << "peer " << peer << ": no final model";
  EXPECT_TRUE(real == read_bytes(peer_dir(sim_run, peer) / "model-final.f32"))
      << "peer " << peer << ": real and simulated parameters differ";
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "missing " << path;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(in, nullptr, false);
}

inline std::int64_t count_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::int64_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// A running `fastk ...` process whose output (stdout and stderr) the test reads as it comes.
class FastkProcess {
 public:
  explicit FastkProcess(std::vector<std::string> args) {
    args.insert(args.begin(), FASTK_BINARY);
    process_ = std::make_unique<node::ChildProcess>(args);
  }

  // `fastk node CONFIG --id I --output RUN_DIR`, with frequent @progress lines.
  static std::unique_ptr<FastkProcess> node(const std::filesystem::path& config, int id,
                                            const std::filesystem::path& run) {
    return std::make_unique<FastkProcess>(
        std::vector<std::string>{"node", config.string(), "--id", std::to_string(id), "--output",
                                 run.string(), "--progress-interval", "0.02"});
  }

  pid_t pid() const { return process_->pid(); }
  const std::string& output() const { return output_; }
  const std::optional<node::PeerProgress>& progress() const { return progress_; }
  void kill(int signal) { process_->send_signal(signal); }

  // Reads what arrived, waiting at most `timeout` for something to arrive.
  void pump(std::chrono::milliseconds timeout) {
    if (process_->output_fd() >= 0) {
      pollfd fd{process_->output_fd(), POLLIN, 0};
      ::poll(&fd, 1, static_cast<int>(timeout.count()));
    }
    for (const auto& line : process_->read_lines()) {
      output_ += line + "\n";
      if (auto p = node::parse_progress(line)) progress_ = p;
    }
  }

  // Waits until the process exits or `timeout` passes; nullopt if it is still running.
  std::optional<node::ExitStatus> wait(Seconds timeout) {
    const auto until = Clock::now() + timeout;
    while (true) {
      pump(std::chrono::milliseconds(20));
      if (auto status = process_->poll_exit()) {
        pump(std::chrono::milliseconds(0));
        return status;
      }
      if (Clock::now() > until) return std::nullopt;
    }
  }

  // Waits until the latest @progress line reports at least `iteration`; false if the process
  // exited or `timeout` passed first.
  bool wait_for_iteration(std::int64_t iteration, Seconds timeout) {
    const auto until = Clock::now() + timeout;
    while (Clock::now() < until) {
      pump(std::chrono::milliseconds(10));
      if (progress_ && progress_->iteration >= iteration) return true;
      if (process_->poll_exit()) return false;
    }
    return false;
  }

 private:
  std::unique_ptr<node::ChildProcess> process_;
  std::string output_;
  std::optional<node::PeerProgress> progress_;
};

// Every peer of a config as `fastk node` processes started by the test.
inline std::vector<std::unique_ptr<FastkProcess>> start_peers(const std::filesystem::path& config,
                                                              const std::filesystem::path& run,
                                                              int peers) {
  std::vector<std::unique_ptr<FastkProcess>> out;
  for (int i = 0; i < peers; ++i) out.push_back(FastkProcess::node(config, i, run));
  return out;
}

// The departure of `peer` in a `fastk node` summary.json, or null.
inline nlohmann::json departure_of(const nlohmann::json& summary, int peer) {
  if (summary.contains("departures")) {
    for (const auto& d : summary["departures"]) {
      if (d.value("peer", -1) == peer) return d;
    }
  }
  return nullptr;
}

// The files a run leaves, relative to its folder (logs are a launcher's own, and each peer
// process's launch.json says which config it ran: real peers only).
inline std::set<std::string> files_of(const std::filesystem::path& run) {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(run)) {
    const std::string name = std::filesystem::relative(entry.path(), run).string();
    if (entry.is_regular_file() && !name.starts_with("logs/") &&
        entry.path().filename() != "launch.json") {
      files.insert(name);
    }
  }
  return files;
}

// The keys of a JSON object, and of the objects of a fixed schema inside it (config tables,
// each peer's summary), as paths. Lists and maps of data (departures, rejected frames by
// cause) hold what happened, not schema.
inline std::set<std::string> keys_of(const nlohmann::json& j, const std::string& prefix = "") {
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.insert(prefix + key);
    if (key == "per_peer" && !value.empty()) {
      for (const auto& k : keys_of(value[0], prefix + key + ".")) keys.insert(k);
    } else if (value.is_object() && key != "rejected_frames") {
      for (const auto& k : keys_of(value, prefix + key + ".")) keys.insert(k);
    }
  }
  return keys;
}

inline std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The pid of the `fastk node CONFIG --id ID` process started by `fastk run` (found by its
// command line in /proc), or -1.
inline pid_t find_peer_pid(const std::filesystem::path& config, int id) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::vector<std::string> argv;
    for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
    if (argv.size() < 5 || argv[1] != "node" || argv[2] != config.string()) continue;
    for (std::size_t i = 3; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--id" && argv[i + 1] == std::to_string(id)) return std::stoi(name);
    }
  }
  return -1;
}

// Waits (at most 60 s, reading the launcher's output meanwhile) until every peer of `run`
// iterates. A peer's iterations.csv reaches the disk in blocks of about 60 rows, so a
// non-empty file means it iterates, far from the end. Every peer must be iterating: a
// neighbour still in its start-up handshake may not have heard from a peer yet, and would
// rightly fail when that peer is killed.
inline bool every_peer_iterates(FastkProcess& launcher, const std::filesystem::path& run,
                                int peers) {
  const auto all_iterate = [&] {
    for (int i = 0; i < peers; ++i) {
      if (count_lines(peer_dir(run, i) / "iterations.csv") < 2) return false;
    }
    return true;
  };
  const auto until = Clock::now() + Seconds(60);
  while (!all_iterate() && Clock::now() < until) launcher.pump(std::chrono::milliseconds(5));
  return all_iterate();
}

// fastk run on `config`, its run folder moved to DIR/real, then fastk sim on the same config
// (its folder: sim_dir(dir)). False, with the failure reported, when either fails.
inline bool run_real_then_sim(const std::filesystem::path& dir,
                              const std::filesystem::path& config) {
  FastkProcess real({"run", config.string(), "--no-plots"});
  const auto status = real.wait(Seconds(120));
  if (!status || !status->ok()) {
    ADD_FAILURE() << real.output();
    return false;
  }
  std::filesystem::rename(run_dir(dir), dir / "real");
  FastkProcess sim({"sim", config.string(), "--quiet", "--no-plots"});
  const auto sim_status = sim.wait(Seconds(120));
  if (!sim_status || !sim_status->ok()) {
    ADD_FAILURE() << sim.output();
    return false;
  }
  return true;
}

}  // namespace fastk::systest
