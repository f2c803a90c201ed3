// Peers on the hosts of a LAN in a box (scripts/lan.sh: network namespaces on a bridge, each
// with its own sshd): started by `fastk run` over real ssh and fetched back with scp, by
// Open MPI's mpirun across the hosts, or by srun on a Slurm of the LAN's own
// (scripts/lan-slurm.sh), they end with the simulator's bits under policy full; a
// host whose link goes down mid-run is reported by the launcher and left behind by its
// neighbours. Needs root and network namespaces: skipped, with the reason, where lan.sh says
// it cannot run. Each test has a LAN of its own (its own name and subnet); CTest still runs
// them one at a time (RESOURCE_LOCK fastk_lan, tests/CMakeLists.txt): they share sshd's
// binaries, /run/fastk-lan and the machine's two cores, and start-up under load is slow.
// ssh reaches the hosts with the LAN's own ssh settings (scripts/lan.sh's ssh and scp first
// on PATH), so root's ~/.ssh is never changed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "isa/level.h"
#include "tests/support/forger.h"
#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

int shell(const std::string& command) { return std::system(command.c_str()); }

class LanInABox : public ::testing::Test {
 protected:
  // Brings up LAN `name` with `hosts` hosts; skips the test where lan.sh cannot run. The test
  // goes on only when this returns true.
  bool up(const std::string& name, int hosts) {
    bring_up(name, hosts);
    return !IsSkipped() && !HasFailure();
  }
  void bring_up(const std::string& name, int hosts) {
    dir_ = testutil::fresh_test_dir("fastk_lan_" + name);
    const auto log = dir_ / "lan.log";
    const int status = shell("scripts/lan.sh up --rate 1gbit --hosts " + std::to_string(hosts) +
                             " --name " + name + " > " + log.string() + " 2>&1");
    if (status != 0) {
      const std::string why = read_bytes(log);
      if (why.find("must run as root") != std::string::npos ||
          why.find("cannot create network namespaces") != std::string::npos) {
        GTEST_SKIP() << "no LAN in a box here: " << why;
      }
      FAIL() << "scripts/lan.sh up failed:\n" << why;
    }
    name_ = name;
    // This process and what it starts (fastk, mpirun) run ssh and scp from PATH: the LAN's.
    const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    ::setenv("PATH", ("/run/fastk-lan/" + name + "/bin:" + path).c_str(), 1);
    std::ifstream list("/run/fastk-lan/" + name + "/hosts");
    for (std::string address, ns; list >> address >> ns;) addresses_.push_back(address);
    ASSERT_EQ(addresses_.size(), static_cast<std::size_t>(hosts));
  }
  void TearDown() override {
    if (slurm_) {
      EXPECT_EQ(shell("scripts/lan-slurm.sh down --name " + name_ + " > /dev/null"), 0);
    }
    if (!name_.empty()) {
      EXPECT_EQ(shell("scripts/lan.sh down --name " + name_ + " > /dev/null"), 0);
    }
  }

  // A ring of two peers per host, the [cluster] naming every host. Start-up (ssh to every
  // host, peers saying hello) gets a minute: on a loaded 2-core machine 10 s was too little.
  TinyExperiment two_peers_per_host(std::int64_t iterations) const {
    TinyExperiment e = tiny_experiment(2 * static_cast<int>(addresses_.size()), iterations);
    e.startup_timeout_ms = 60000;
    e.extra = "hosts = [";
    for (const auto& a : addresses_) e.extra += "\"" + a + "\", ";
    e.extra += "]\n";
    return e;
  }

  // The hosts' /24 ("10.213.N.0/24"), for Open MPI's interface selection.
  std::string subnet() const { return addresses_[0].substr(0, addresses_[0].rfind('.')) + ".0/24"; }

  // Runs `fastk sim` on `config` and checks that every peer of `run` ended with its bits.
  void expect_simulations_bits(const std::filesystem::path& config,
                               const std::filesystem::path& run, int peers) {
    FastkProcess sim({"sim", config.string(), "--quiet", "--no-plots"});
    const auto status = sim.wait(Seconds(120));
    ASSERT_TRUE(status && status->ok()) << sim.output();
    for (int i = 0; i < peers; ++i) expect_simulations_model(run, sim_dir(dir_), i);
  }

  // A run that spans hosts needs keys (docs/security.md): made here as a user would, in a
  // folder every host of the LAN in a box reads (they share this machine's files).
  std::filesystem::path make_keys(const std::filesystem::path& config) {
    const auto keys = dir_ / "keys";
    EXPECT_EQ(shell(FASTK_BINARY " keys " + keys.string() + " --config " + config.string() +
                    " > /dev/null"),
              0);
    return keys;
  }

  // After a launch by rank (mpirun, srun): each rank ran as the peer of its number and
  // trained to the end, and every peer ends with `fastk sim`'s bits.
  void expect_ranks_ran_as_their_peers_with_the_simulations_bits(
      const std::filesystem::path& config, int peers) {
    for (int i = 0; i < peers; ++i) {
      const auto summary = read_json(peer_dir(run_dir(dir_), i) / "summary.json");
      EXPECT_EQ(summary["peer"], i) << "rank " << i << " did not run as peer " << i;
      EXPECT_EQ(summary["end"], "iterations") << "peer " << i;
      EXPECT_EQ(summary["links"], "curve") << "peer " << i << ": a LAN run over plain links";
    }
    const auto real_run = dir_ / "real";
    std::filesystem::rename(run_dir(dir_), real_run);
    expect_simulations_bits(config, real_run, peers);
  }

  std::filesystem::path dir_;
  std::string name_;
  bool slurm_ = false;  // scripts/lan-slurm.sh up ran on the LAN
  std::vector<std::string> addresses_;
};

// fastk run over ssh, with the keys it makes for the launch: a forger on the LAN without
// them changes nothing (the bits are the simulation's) and is counted. The forger sends from
// before the launch until the run ends and retries its connection every 10 ms; the run
// trains 5000 iterations (seconds; 100 took 0.1 s, about the time the forger needs to get
// through, and it lost that race), so peer 2 listens for a hundred times longer than the
// forger needs to reach it, however slow the start-up.
TEST_F(LanInABox, FastkRunOverSshOnFourHostsEndsWithTheSimulationsBits) {
  if (!up("fkssh", 4)) return;
  TinyExperiment e = two_peers_per_host(5000);
  e.peer_timeout_ms = 30000;  // a stall on a loaded machine must not make a neighbour "gone"
  const auto config = write_config(dir_, e);

  FastkProcess real({"run", config.string(), "--no-plots"});
  // A keyless sender on the LAN (this machine, as seen from host 1) forges frames to peer 2.
  const std::string peer2 = "tcp://" + addresses_[1] + ":" + std::to_string(e.base_port);
  std::optional<Forger> forger(std::in_place, peer2, 99, e.iterations - 1);
  const auto status = real.wait(Seconds(120));
  forger.reset();
  ASSERT_TRUE(status.has_value()) << real.output();
  ASSERT_TRUE(status->ok()) << real.output();
  EXPECT_NE(real.output().find("8 peers on 4 remote host(s),"), std::string::npos) << real.output();
  const auto real_run = dir_ / "real";
  std::filesystem::rename(run_dir(dir_), real_run);
  const auto summary = read_json(real_run / "summary.json");
  EXPECT_EQ(summary["ok"], true);
  EXPECT_EQ(summary["outputs_not_fetched"].size(), 0u);
  for (int i = 0; i < e.peers; ++i) {
    // fastk run made keys for the launch and copied each host its peers' secrets.
    EXPECT_EQ(read_json(peer_dir(real_run, i) / "summary.json")["links"], "curve") << i;
  }
  EXPECT_GE(refused_connections(read_json(peer_dir(real_run, 2) / "summary.json")), 1u)
      << "the forger never reached peer 2 while it ran";
  expect_simulations_bits(config, real_run, e.peers);
}

TEST_F(LanInABox, MpirunAcrossHostsEndsWithTheSimulationsBits) {
  if (!up("fkmpi", 4)) return;
  ASSERT_EQ(shell("command -v mpirun > /dev/null"), 0)
      << "no mpirun: scripts/install-deps.sh installs openmpi-bin";
  TinyExperiment e = two_peers_per_host(100);
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir_, e);

  // Two slots per host, filled in order: rank r runs on the host [cluster] places peer r on.
  std::string slots;
  for (const auto& a : addresses_) slots += (slots.empty() ? "" : ",") + a + ":2";
  const auto log = dir_ / "mpirun.log";
  const auto keys = make_keys(config);
  const int status =
      shell("timeout 120 mpirun --allow-run-as-root -n 8 -H " + slots +
            " --mca oob_tcp_if_include " + subnet() +
            // ssh with the LAN's settings also where an orted starts others (tree spawn).
            " --mca plm_rsh_args '-F /run/fastk-lan/fkmpi/ssh_config' " FASTK_BINARY " node " +
            config.string() + " --keys " + keys.string() + " > " + log.string() + " 2>&1");
  ASSERT_EQ(status, 0) << read_bytes(log);
  expect_ranks_ran_as_their_peers_with_the_simulations_bits(config, e.peers);
}

TEST_F(LanInABox, SrunAcrossHostsEndsWithTheSimulationsBits) {
  if (!up("fkslm", 4)) return;
  const auto log = dir_ / "slurm.log";
  // A Slurm of the LAN's own: slurmd on each host, slurmctld and munged here.
  slurm_ = true;  // down, even after a failed up
  ASSERT_EQ(shell("scripts/lan-slurm.sh up --name fkslm > " + log.string() + " 2>&1"), 0)
      << read_bytes(log);
  TinyExperiment e = two_peers_per_host(100);
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir_, e);

  // srun's default block distribution puts ranks 2h and 2h+1 on node h+1, host h+1. The
  // keys come from the config this time ([security] keys, here as a --set).
  const auto keys = make_keys(config);
  const int status = shell(
      "SLURM_CONF=/run/fastk-slurm/fkslm/slurm.conf timeout 120 srun -N 4 "
      "-n 8 --ntasks-per-node=2 --overcommit " FASTK_BINARY " node " +
      config.string() + " --set security.keys=" + keys.string() + " > " + log.string() + " 2>&1");
  ASSERT_EQ(status, 0) << read_bytes(log);
  expect_ranks_ran_as_their_peers_with_the_simulations_bits(config, e.peers);
}

TEST_F(LanInABox, AHostWhoseLinkGoesDownIsNamedAndItsNeighboursFinish) {
  if (!up("fkcut", 4)) return;
  TinyExperiment e = two_peers_per_host(100000000);
  e.duration_s = 8;  // ends the run
  e.peer_timeout_ms = 1500;
  const auto config = write_config(dir_, e);

  FastkProcess real({"run", config.string(), "--no-plots"});
  // Host 3 (peers 4 and 5) loses its link once its peers are training.
  const auto log = run_dir(dir_) / "logs" / "peer-4.log";
  const auto trained = [&] {  // a progress line past iteration 0
    const std::string text = read_bytes(log), mark = "@progress iteration=";
    for (auto at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
      if (at + mark.size() < text.size() && text[at + mark.size()] != '0') return true;
    }
    return false;
  };
  const auto until = Clock::now() + Seconds(60);
  while (!trained() && Clock::now() < until) real.pump(std::chrono::milliseconds(50));
  ASSERT_TRUE(trained()) << "peer 4 never trained:\n" << read_bytes(log) << real.output();
  ASSERT_EQ(shell("ip link set fkcutv3 down"), 0);
  const auto status = real.wait(Seconds(90));
  ASSERT_TRUE(status.has_value()) << real.output();
  EXPECT_FALSE(status->ok()) << real.output();
  for (const int lost : {4, 5}) {
    const std::string named = "peer " + std::to_string(lost) + " on " + addresses_[2] + " failed";
    EXPECT_NE(real.output().find(named), std::string::npos) << real.output();
  }
  EXPECT_NE(real.output().find("lost its connection"), std::string::npos) << real.output();
  // The unreachable host keeps its copy of the keys, and the launcher says where (here the
  // hosts share this machine's files, so the test removes it).
  const std::string kept = "the run's keys stay on " + addresses_[2] + " in ";
  const auto at = real.output().find(kept);
  ASSERT_NE(at, std::string::npos) << real.output();
  const auto folder = real.output().substr(
      at + kept.size(), real.output().find(' ', at + kept.size()) - at - kept.size());
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(folder) / "peer-4.secret")) << folder;
  std::filesystem::remove_all(folder);

  // Peer 3 (left of 4) and peer 6 (right of 5) record the silence and train to the end.
  for (const auto& [peer, gone] : {std::pair{3, 4}, std::pair{6, 5}}) {
    const auto summary = read_json(peer_dir(run_dir(dir_), peer) / "summary.json");
    EXPECT_EQ(summary["end"], "duration") << "peer " << peer;
    const auto departure = departure_of(summary, gone);
    ASSERT_FALSE(departure.is_null()) << "peer " << peer << " did not record " << gone;
    EXPECT_EQ(departure["how"], "silent") << "peer " << peer;
    EXPECT_LT(departure["at_iteration"].get<std::int64_t>(),
              summary["iterations"].get<std::int64_t>())
        << "peer " << peer << " stopped when its neighbour went";
  }
  const auto run = read_json(run_dir(dir_) / "summary.json");
  EXPECT_EQ(run["ok"], false);
  EXPECT_EQ(run["outputs_not_fetched"], nlohmann::json::array({4, 5}));
}

// A config of 8 peers on the LAN's 4 hosts reading Fashion-MNIST (files the doctor checks).
std::filesystem::path write_doctor_config(const std::filesystem::path& dir,
                                          const std::vector<std::string>& hosts, int base_port) {
  const auto path = dir / "doctor.toml";
  std::ofstream out(path);
  out << "[run]\niterations = 10\n[topology]\nkind = \"ring\"\npeers = 8\n"
      << "[data]\nkind = \"fashion_mnist\"\n[model]\nkind = \"logistic_regression\"\n"
      << "[cluster]\nbase_port = " << base_port << "\nhosts = [";
  for (const auto& h : hosts) out << "\"" << h << "\", ";
  out << "]\n";
  return path;
}

TEST_F(LanInABox, DoctorFindsAnotherBuildNoSshdAPortTakenAMissingDataSetAndAFirewalledEdge) {
  if (!up("fkdoc", 4)) return;
  ASSERT_EQ(shell("command -v nft > /dev/null"), 0)
      << "no nft: scripts/install-deps.sh installs nftables";
  const int port = free_base_port(2);
  const auto config = write_doctor_config(dir_, addresses_, port);
  FastkProcess healthy({"doctor", config.string(), "--probe-mb", "1"});
  auto status = healthy.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << healthy.output();
  EXPECT_TRUE(status->ok()) << healthy.output();
  EXPECT_NE(healthy.output().find("no problems found"), std::string::npos) << healthy.output();
  EXPECT_NE(healthy.output().find("bound by communication"), std::string::npos) << healthy.output();

  // The same binary with a byte appended still runs, but it is another build.
  const auto other = dir_ / "fastk-other";
  std::filesystem::copy_file(FASTK_BINARY, other);
  std::ofstream(other, std::ios::app) << '\n';
  FastkProcess other_build({"doctor", config.string(), "--probe-mb", "0", "--no-gradient",
                            "--remote-fastk", other.string()});
  status = other_build.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << other_build.output();
  EXPECT_EQ(status->code, 1) << other_build.output();
  EXPECT_NE(other_build.output().find(addresses_[0] + " runs another fastk build"),
            std::string::npos)
      << other_build.output();

  // Host 2 loses its sshd; on host 3 another program holds peer 4's port; host 4 has no
  // data set (a private empty folder over it, in the mount namespace of its sshd); host 1
  // drops what host 4 sends to peer 0's port.
  const std::string state = "/run/fastk-lan/fkdoc/";
  ASSERT_EQ(shell("kill $(cat " + state + "sshd-2.pid)"), 0);
  node::ChildProcess squatter({"ip", "netns", "exec", "fkdoc-h3", "python3", "-c",
                               "import socket, time\ns = socket.socket()\ns.bind(('', " +
                                   std::to_string(port) +
                                   "))\ns.listen()\nprint('listening', flush=True)\n"
                                   "time.sleep(120)"});
  std::string said;
  for (int i = 0; i < 100 && said.find("listening") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& line : squatter.read_lines()) said += line;
  }
  ASSERT_NE(said.find("listening"), std::string::npos) << said;
  ASSERT_EQ(shell("nsenter --mount --target $(cat " + state +
                  "sshd-4.pid) mount -t tmpfs none /usr/share/datasets/fashion-mnist"),
            0);
  const std::string nft = "ip netns exec fkdoc-h1 nft ";
  ASSERT_EQ(shell(nft + "add table inet fastk_test && " + nft +
                  "add chain inet fastk_test input '{ type filter hook input priority 0; }' && " +
                  nft + "add rule inet fastk_test input ip saddr " + addresses_[3] + " tcp dport " +
                  std::to_string(port) + " drop"),
            0);

  FastkProcess sick({"doctor", config.string(), "--probe-mb", "1", "--no-gradient"});
  status = sick.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << sick.output();
  EXPECT_EQ(status->code, 1) << sick.output();
  const std::string& out = sick.output();
  for (const std::string& diagnosis :
       {"no sshd answers on " + addresses_[1],
        "peer 4 on " + addresses_[2] + " cannot listen on tcp://*:" + std::to_string(port) +
            " (Address already in use)",
        addresses_[3] + " cannot read the data set",
        "edge 7 -> 0: " + addresses_[3] + " cannot reach peer 0 at tcp://" + addresses_[0] + ":" +
            std::to_string(port)}) {
    EXPECT_NE(out.find(diagnosis), std::string::npos) << "missing: " << diagnosis << "\n" << out;
  }
  EXPECT_NE(out.find("4 problem(s)"), std::string::npos) << out;
}

// A host whose CPU cannot run the fastk it would run: the doctor names it and why, before
// anything starts. On this LAN every host shares this machine's CPU, so host 2 is given another
// fastk at the same path, as an NFS mount of another build would: in the mount namespace of
// its sshd, the binary's path is bind-mounted over by a fastk that needs the level above this
// CPU's. That fastk is a copy of this very binary with FASTK_ISA set to that level, which the
// start-up check (isa/startup_check.cc) refuses by the same code and message as a binary built
// for it (docs/build.md §1 shows both). A CPU with every level (AVX-512) has no level above
// it: there the test says so and stops; the SIGILL test below runs on every CPU.
TEST_F(LanInABox, DoctorNamesAHostThatWouldCrash) {
  const isa::Level cpu = isa::cpu_level();
  if (cpu == isa::Level::kX86_64_V4) {
    GTEST_SKIP() << "this CPU has every x86-64 level (" << isa::describe(cpu)
                 << "): no fastk it cannot run can be made here";
  }
  if (!up("fkisa", 3)) return;
  const auto above = static_cast<isa::Level>(static_cast<int>(cpu) + 1);
  // The wrapper runs a copy: exec of the original path would run the wrapper again.
  const auto copy = dir_ / "fastk-copy";
  std::filesystem::copy_file(FASTK_BINARY, copy);
  const auto wide = dir_ / "fastk-wide";
  std::ofstream(wide) << "#!/bin/sh\nFASTK_ISA=" << isa::level_name(above) << " exec "
                      << copy.string() << " \"$@\"\n";
  std::filesystem::permissions(wide, std::filesystem::perms::owner_all);
  ASSERT_EQ(shell("nsenter --mount --target $(cat /run/fastk-lan/fkisa/sshd-2.pid) mount --bind " +
                  wide.string() + " " FASTK_BINARY),
            0);
  const auto config = write_doctor_config(dir_, addresses_, free_base_port(3));
  FastkProcess doctor({"doctor", config.string(), "--probe-mb", "0"});
  const auto status = doctor.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << doctor.output();
  EXPECT_EQ(status->code, 1) << doctor.output();
  const std::string& out = doctor.output();
  const std::string lacks = isa::missing_features(above).front();
  for (const std::string& diagnosis :
       std::vector<std::string>{addresses_[1] + " would crash: fastk: cannot start on host ",
                                std::string("asks for ") + isa::describe(above) +
                                    " kernels, and this CPU lacks " + lacks,
                                "it would die of SIGILL (illegal instruction)"}) {
    EXPECT_NE(out.find(diagnosis), std::string::npos) << "missing: " << diagnosis << "\n" << out;
  }
  // The other hosts ran a gradient with their kernels: this CPU's level.
  const std::string kernels = isa::level_name(isa::kernel_level());
  EXPECT_NE(out.find(addresses_[0]), std::string::npos) << out;
  EXPECT_NE(out.find(" " + kernels + " "), std::string::npos) << out;
}

// A peer on another host dies of SIGILL mid-run: the run names the signal and the host,
// through ssh, in its message and its summary. Runs on every CPU.
TEST_F(LanInABox, ARunNamesTheSignalThatKilledARemotePeer) {
  if (!up("fksig", 3)) return;
  TinyExperiment e = tiny_experiment(6, 100000000, "deadline");
  e.duration_s = 60;  // ends the run if the peers never notice
  e.startup_timeout_ms = 60000;
  e.extra = "hosts = [\"" + addresses_[0] + "\", \"" + addresses_[2] + "\", ]\n";
  const auto run_config = write_config(dir_, e);
  FastkProcess run({"run", run_config.string(), "--no-plots"});
  ASSERT_TRUE(every_peer_iterates(run, run_dir(dir_), e.peers)) << run.output();
  const pid_t victim = find_peer_pid(run_config, 4);  // on the second host: addresses_[2]
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGILL), 0);
  const auto ended = run.wait(Seconds(120));
  ASSERT_TRUE(ended.has_value()) << run.output();
  EXPECT_EQ(ended->code, 1) << run.output();
  EXPECT_NE(run.output().find("peer 4 on " + addresses_[2] +
                              " failed (killed by SIGILL): SIGILL "
                              "after "),
            std::string::npos)
      << run.output();
  const auto summary = read_json(run_dir(dir_) / "summary.json");
  EXPECT_NE(summary["per_peer"][4]
                .value("status", "")
                .find("killed by SIGILL on " + addresses_[2] + " after "),
            std::string::npos)
      << summary["per_peer"][4].dump();
}

}  // namespace
}  // namespace fastk::systest
