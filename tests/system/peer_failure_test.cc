// Peers that die or never start, with real `fastk` processes over ZeroMQ on this machine:
// the survivors finish, nobody hangs, and the failure is reported with names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A launcher killed with SIGKILL (no clean-up of its own) loses nothing: each peer sees its
// stdin close, stops, writes its summary and final model, and removes its shared memory and
// socket; `fastk report` then builds the run's results from the peers' folders.

TEST(PeerFailure, AKilledLauncherLeavesEveryPeersOutputsAndNothingElse) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 100000000);
  e.duration_s = 60;  // ends the run if the peers never notice
  const auto config = write_config(dir, e);
  const auto run = run_dir(dir);
  FastkProcess launcher({"run", config.string(), "--no-plots"});
  ASSERT_TRUE(every_peer_iterates(launcher, run, e.peers)) << launcher.output();
  launcher.kill(SIGKILL);
  ASSERT_TRUE(launcher.wait(Seconds(10)).has_value());

  const auto until = Clock::now() + Seconds(20);
  const auto some_peer_runs = [&] {
    for (int i = 0; i < e.peers; ++i)
      if (find_peer_pid(config, i) > 0) return true;
    return false;
  };
  while (some_peer_runs() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(some_peer_runs()) << "peers outlived their killed launcher by 20 s";
  for (int i = 0; i < e.peers; ++i) {
    const auto summary = read_json(peer_dir(run, i) / "summary.json");
    EXPECT_EQ(summary.value("end", ""), "signal") << "peer " << i;
    EXPECT_GT(summary.value("iterations", 0), 0) << "peer " << i;
    EXPECT_EQ(std::filesystem::file_size(peer_dir(run, i) / "model-final.f32"), 99 * sizeof(float));
    const std::string port = std::to_string(e.base_port + i);
    EXPECT_FALSE(std::filesystem::exists("/dev/shm/fastk-127.0.0.1-" + port + ".models")) << i;
    EXPECT_FALSE(std::filesystem::exists(
        local_endpoint(e.base_port + i).substr(std::string("ipc://").size())))
        << "peer " << i << "'s socket file";
  }
  FastkProcess report({"report", run.string(), "--config", config.string(), "--no-plots"});
  const auto reported = report.wait(Seconds(60));
  ASSERT_TRUE(reported.has_value()) << report.output();
  // Every peer reported, but none ran to its end: results, and an exit code that says so.
  EXPECT_EQ(reported->code, 1) << report.output();
  EXPECT_THAT(report.output(), HasSubstr("peer 3 stopped after"));
  const auto summary = read_json(run / "summary.json");
  EXPECT_EQ(summary["ok"], false);
  EXPECT_EQ(summary["peers_reported"], e.peers);
}

// This user's key folders in the temporary folder (fastk run's, node/cli/run_keys.h).
std::set<std::filesystem::path> key_folders() {
  std::set<std::filesystem::path> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    if (entry.path().filename().string().starts_with("fastk-keys-")) out.insert(entry.path());
  }
  return out;
}

// A launcher killed with SIGKILL cannot remove its run's keys: the next launch does, and
// only those of launches that are gone (a folder whose owner still runs stays).
TEST(PeerFailure, TheNextLaunchRemovesTheKeysAKilledLauncherLeftAndOnlyThose) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(3, 100000000);
  e.duration_s = 60;
  e.extra = "[security]\ncurve = \"on\"\n";  // fastk run makes keys for a local run too
  const auto config = write_config(dir, e);
  // A temporary folder of the test's own (TMPDIR, inherited by the launches): another test's
  // launch that makes keys meanwhile cannot remove these first.
  std::filesystem::create_directories(dir / "tmp");
  ::setenv("TMPDIR", (dir / "tmp").c_str(), 1);
  // A folder of a launch that still runs: this test process owns it.
  std::string live = (dir / "tmp" / "fastk-keys-XXXXXX").string();
  ASSERT_NE(::mkdtemp(live.data()), nullptr);
  {
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 22; ++i) fields >> field;
    std::ofstream(std::filesystem::path(live) / "owner") << ::getpid() << ' ' << field << '\n';
  }
  const auto before = key_folders();
  FastkProcess killed({"run", config.string(), "--no-plots"});
  ASSERT_TRUE(every_peer_iterates(killed, run_dir(dir), e.peers)) << killed.output();
  killed.kill(SIGKILL);
  ASSERT_TRUE(killed.wait(Seconds(10)).has_value());
  std::vector<std::filesystem::path> left;  // the killed launch's (other tests may run)
  for (const auto& folder : key_folders()) {
    pid_t owner = 0;
    std::ifstream(folder / "owner") >> owner;
    if (!before.count(folder) && owner == killed.pid()) left.push_back(folder);
  }
  ASSERT_EQ(left.size(), 1u) << "the killed launch's keys";
  for (int i = 0; i < 100 && find_peer_pid(config, 0) > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its peers stop by themselves
  }

  e.duration_s = 0;
  e.iterations = 50;
  const auto again = write_config(dir, e);
  FastkProcess next({"run", again.string(), "--no-plots"});
  const auto status = next.wait(Seconds(120));
  ASSERT_TRUE(status.has_value() && status->ok()) << next.output();
  EXPECT_THAT(next.output(),
              HasSubstr("removed the keys a killed launch left in " + left[0].string()));
  EXPECT_FALSE(std::filesystem::exists(left[0]));
  EXPECT_TRUE(std::filesystem::exists(live)) << "a live launch's keys were removed";
  std::filesystem::remove_all(live);
}

TEST(PeerFailure, DeadlinePeersFinishWithoutAKilledNeighbourAndTheRunNamesIt) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(5, 3000, "deadline");
  const auto config = write_config(dir, e);
  const auto run = run_dir(dir);
  FastkProcess launcher({"run", config.string(), "--no-plots"});

  ASSERT_TRUE(every_peer_iterates(launcher, run, e.peers)) << launcher.output();
  const pid_t victim = find_peer_pid(config, 2);
  ASSERT_GT(victim, 0);
  // [cluster] bind_cpus (on by default): peer 0 of 5 runs on the first block of the CPUs
  // it may use (CPU 0 of 2 on the CI machine), a strict part of them.
  const auto cpus_of = [](pid_t pid) {
    cpu_set_t mask;
    std::vector<int> cpus;
    if (sched_getaffinity(pid, sizeof mask, &mask) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
    return cpus;
  };
  const std::vector<int> allowed = cpus_of(0);
  const std::vector<int> first = cpus_of(find_peer_pid(config, 0));
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), allowed.front());
  if (allowed.size() > 1) {
    EXPECT_LT(first.size(), allowed.size()) << "peer 0 is not bound to a block of the CPUs";
  }
  // Its models live in shared memory (local_transport "shm"), which it cannot remove when
  // killed: the launcher does.
  const auto victim_models =
      "/dev/shm/fastk-127.0.0.1-" + std::to_string(e.base_port + 2) + ".models";
  ASSERT_TRUE(std::filesystem::exists(victim_models));
  ASSERT_EQ(::kill(victim, SIGKILL), 0);

  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << "fastk run hangs:\n" << launcher.output();
  EXPECT_EQ(status->code, 1) << launcher.output();
  EXPECT_FALSE(std::filesystem::exists(victim_models));
  EXPECT_THAT(launcher.output(), HasSubstr("peer 2 failed (killed by SIGKILL); log: " +
                                           (run / "logs" / "peer-2.log").string()));
  EXPECT_FALSE(std::filesystem::exists(peer_dir(run, 2) / "summary.json"));
  for (int i : {0, 1, 3, 4}) {
    const auto summary = read_json(peer_dir(run, i) / "summary.json");
    EXPECT_EQ(summary.value("finished", false), true) << "peer " << i;
    EXPECT_EQ(summary.value("iterations", 0), e.iterations) << "peer " << i;
    EXPECT_THAT(launcher.output(), Not(HasSubstr("peer " + std::to_string(i) + " failed")));
  }
  for (int neighbour : {1, 3}) {
    const auto departure = departure_of(read_json(peer_dir(run, neighbour) / "summary.json"), 2);
    ASSERT_FALSE(departure.is_null()) << "peer " << neighbour << " did not record peer 2 leaving";
    EXPECT_EQ(departure["how"], "silent");
  }
  // The run's summary says the run failed and shows the dead peer, and how it died.
  const auto summary = read_json(run / "summary.json");
  EXPECT_EQ(summary.value("ok", true), false);
  EXPECT_EQ(summary.value("peers_reported", 0), 4);
  const auto& dead = summary["per_peer"][2];
  EXPECT_THAT(dead.value("status", ""), HasSubstr("killed by SIGKILL on this machine after "));
  EXPECT_EQ(dead["failure"]["signal"], "SIGKILL");
  EXPECT_TRUE(dead["failure"]["exit_code"].is_null());
}

// A peer killed by a catchable fatal signal (here a real SIGILL from kill(), as a faulting
// instruction would raise) says which, when and on what instruction sets, in its last line;
// the run's table and summary.json carry it, not only "no summary".
TEST(PeerFailure, APeerKilledBySigillSaysSoInTheTableAndTheSummary) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(3, 3000, "deadline");
  const auto config = write_config(dir, e);
  const auto run = run_dir(dir);
  FastkProcess launcher({"run", config.string(), "--no-plots"});
  ASSERT_TRUE(every_peer_iterates(launcher, run, e.peers)) << launcher.output();
  const pid_t victim = find_peer_pid(config, 1);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGILL), 0);

  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << "fastk run hangs:\n" << launcher.output();
  EXPECT_EQ(status->code, 1) << launcher.output();
  const std::string sent = "(sent by process " + std::to_string(::getpid()) + ")";
  EXPECT_THAT(launcher.output(), HasSubstr("peer 1 failed (killed by SIGILL): SIGILL after "));
  EXPECT_THAT(launcher.output(), HasSubstr(sent));
  // The table's row for peer 1.
  EXPECT_THAT(launcher.output(), HasSubstr("     1  killed by SIGILL on this machine after "));
  const auto summary = read_json(run / "summary.json");
  const auto& dead = summary["per_peer"][1];
  EXPECT_THAT(dead.value("status", ""), HasSubstr("killed by SIGILL on this machine after "));
  EXPECT_THAT(dead.value("status", ""), HasSubstr(sent + ": fastk built with -march="));
  EXPECT_EQ(dead["failure"]["signal"], "SIGILL");
  EXPECT_THAT(dead["failure"].value("said", ""), HasSubstr("SIGILL after "));
}

TEST(PeerFailure, WithPolicyFullNoPeerHangsOnAKilledNeighbour) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 400, "full");
  e.peer_timeout_ms = 1000;
  const auto config = write_config(dir, e);
  const auto run = run_dir(dir);
  auto peers = start_peers(config, run, e.peers);

  ASSERT_TRUE(peers[1]->wait_for_iteration(20, Seconds(60))) << peers[1]->output();
  peers[1]->kill(SIGKILL);
  ASSERT_EQ(peers[1]->wait(Seconds(10))->signal, SIGKILL);
  ASSERT_LT(peers[1]->progress()->iteration, e.iterations) << "killed after the end";
  // Started without `fastk run`, a killed peer leaves its shared-memory models behind (as
  // documented); whoever launched it removes them, as this test does.
  EXPECT_TRUE(std::filesystem::remove("/dev/shm/fastk-127.0.0.1-" +
                                      std::to_string(e.base_port + 1) + ".models"));

  // Each survivor waits at most peer_timeout_ms for the dead peer, then carries on without
  // it; the bound is generous for a loaded machine, a hang would never end.
  for (int i : {0, 2, 3}) {
    const auto status = peers[i]->wait(Seconds(60));
    ASSERT_TRUE(status.has_value()) << "peer " << i << " hangs:\n" << peers[i]->output();
    EXPECT_TRUE(status->ok()) << peers[i]->output();
    const auto summary = read_json(peer_dir(run, i) / "summary.json");
    EXPECT_EQ(summary.value("finished", false), true) << peers[i]->output();
    EXPECT_EQ(summary.value("iterations", 0), e.iterations);
  }
  for (int neighbour : {0, 2}) {
    const auto departure = departure_of(read_json(peer_dir(run, neighbour) / "summary.json"), 1);
    ASSERT_FALSE(departure.is_null()) << peers[neighbour]->output();
    EXPECT_EQ(departure["how"], "silent");
    // Recorded when noticed (peer_timeout_ms after the kill), not when the run ended.
    EXPECT_LT(departure["at_iteration"].get<std::int64_t>(), e.iterations);
    EXPECT_THAT(peers[neighbour]->output(), HasSubstr("neighbour 1 left (silent)"));
  }
}

// Kill and restart (fastk run --restart-failed, docs/protocol.md §6.4): a run on data that are
// not too easy (a linear model reaches about 76% on them) and long enough that peer 2 dies
// early in it. A small step, large batches and 10,000 test samples keep the spread of the
// final accuracy between undisturbed adaptive runs near 0.2 points (measured under load).
TinyExperiment restart_experiment(const std::string& policy) {
  TinyExperiment e = tiny_experiment(4, 40000, policy);
  e.model = "logistic_regression";
  e.separation = 1.5;
  e.test_samples = 10000;
  e.batch_size = 64;
  e.lr = 0.01;
  return e;
}

struct RestartedRun {
  double accuracy = 0;
  std::string output;                         // the launcher's
  std::string peer_log;                       // peer 2's, both processes
  std::vector<std::int64_t> peer_iterations;  // peer 2's rows of the run's iterations.csv
};

// Runs `e` (with run.checkpoint_every = `checkpoint_every`) under fastk run --restart-failed
// 1; with `kill_after`, peer 2 is killed by SIGKILL once that file is in its folder. Every
// peer must end at the last iteration.
RestartedRun run_restarting(const TinyExperiment& e, std::int64_t checkpoint_every,
                            const std::string& kill_after) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const auto config = write_config(dir, e);
  {  // [run] is the file's first table: the key goes right after its header
    std::ifstream in(config);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(text.find('\n') + 1,
                "checkpoint_every = " + std::to_string(checkpoint_every) + "\n");
    std::ofstream(config, std::ios::trunc) << text;
  }
  const auto run = run_dir(dir);
  FastkProcess launcher({"run", config.string(), "--no-plots", "--restart-failed", "1"});
  RestartedRun out;
  if (!kill_after.empty()) {
    EXPECT_TRUE(every_peer_iterates(launcher, run, e.peers)) << launcher.output();
    const auto until = Clock::now() + Seconds(60);
    while (!std::filesystem::exists(peer_dir(run, 2) / kill_after) && Clock::now() < until) {
      launcher.pump(std::chrono::milliseconds(5));
    }
    const pid_t victim = find_peer_pid(config, 2);
    EXPECT_GT(victim, 0);
    if (victim > 0) ::kill(victim, SIGKILL);
  }
  const auto status = launcher.wait(Seconds(180));
  out.output = launcher.output();
  EXPECT_TRUE(status.has_value()) << "fastk run hangs:\n" << out.output;
  if (!status) launcher.kill(SIGKILL);
  EXPECT_TRUE(status && status->ok()) << out.output;
  for (int i = 0; i < e.peers; ++i) {
    const auto summary = read_json(peer_dir(run, i) / "summary.json");
    EXPECT_EQ(summary.value("iterations", 0), e.iterations) << "peer " << i;
    EXPECT_EQ(summary.value("finished", false), true) << "peer " << i;
  }
  out.accuracy = read_json(run / "summary.json").value("final_test_accuracy", 0.0);
  std::ifstream log(run / "logs" / "peer-2.log");
  out.peer_log.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  std::ifstream rows(run / "iterations.csv");
  std::string line;
  std::getline(rows, line);
  while (std::getline(rows, line)) {
    if (line.rfind("2,", 0) == 0) out.peer_iterations.push_back(std::stoll(line.substr(2)));
  }
  return out;
}

// An undisturbed run and one where peer 2 is killed (once `kill_after` is in its folder)
// and restarted: the restarted run ends well, says so, and ends within a point of the
// undisturbed one. Returns the restarted run.
RestartedRun kill_and_restart(const std::string& policy, std::int64_t checkpoint_every,
                              const std::string& kill_after, const std::string& comes_back,
                              const std::string& extra = "") {
  TinyExperiment e = restart_experiment(policy);
  e.extra = extra;
  const double undisturbed = run_restarting(e, checkpoint_every, "").accuracy;
  RestartedRun r = run_restarting(e, checkpoint_every, kill_after);
  EXPECT_THAT(r.output, HasSubstr("peer 2 failed (killed by SIGKILL"));
  EXPECT_THAT(r.output, HasSubstr("restarting it (restart 1 of 1)"));
  EXPECT_THAT(r.peer_log, HasSubstr(comes_back));
  EXPECT_NEAR(r.accuracy, undisturbed, 0.01);
  EXPECT_FALSE(r.peer_iterations.empty());
  return r;
}

// Under full, with checkpoints and encrypted links: peer 2 goes on from its last checkpoint
// with the launch's keys, its neighbours wait for it again, and its rows hold every
// iteration once, in order.
TEST(PeerRestart, AKilledPeerUnderFullComesBackFromItsCheckpoint) {
  const RestartedRun r =
      kill_and_restart("full", 2000, "checkpoint.bin", "peer 2: resuming at iteration ",
                       "[security]\ncurve = \"on\"\n");  // the restart needs the launch's keys
  ASSERT_FALSE(r.peer_iterations.empty());
  const auto wrong = std::adjacent_find(r.peer_iterations.begin(), r.peer_iterations.end(),
                                        [](std::int64_t a, std::int64_t b) { return b != a + 1; });
  EXPECT_EQ(wrong, r.peer_iterations.end())
      << "row " << (wrong - r.peer_iterations.begin()) << " is iteration " << *wrong
      << ", the next " << *std::next(wrong);
  EXPECT_EQ(r.peer_iterations.front(), 0);
  EXPECT_EQ(r.peer_iterations.size(), 40000u);
}

// Under adaptive, without checkpoints: peer 2 joins from the average of its neighbours'
// models at their newest iteration, and goes on from there to the last.
TEST(PeerRestart, AKilledPeerUnderAdaptiveJoinsFromItsNeighbours) {
  const RestartedRun r = kill_and_restart("adaptive", 0, "iterations.csv", "no checkpoint at");
  EXPECT_THAT(r.peer_log, HasSubstr("peer 2: joined at iteration "));
  ASSERT_FALSE(r.peer_iterations.empty());
  EXPECT_TRUE(std::is_sorted(r.peer_iterations.begin(), r.peer_iterations.end()));
  EXPECT_EQ(r.peer_iterations.back(), 40000 - 1);
}

TEST(PeerFailure, APeerWhoseNeighbourNeverStartsNamesItAndItsEndpoint) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 200);
  e.startup_timeout_ms = 1500;
  const auto config = write_config(dir, e);
  // Peers 0 and 1 start; 2 and 3 never do. On the ring, 0 misses 3 and 1 misses 2.
  auto peer0 = FastkProcess::node(config, 0, run_dir(dir));
  auto peer1 = FastkProcess::node(config, 1, run_dir(dir));
  for (const auto& [peer, missing] : {std::pair{peer0.get(), 3}, std::pair{peer1.get(), 2}}) {
    const auto status = peer->wait(Seconds(30));
    ASSERT_TRUE(status.has_value()) << peer->output();
    EXPECT_EQ(status->code, 1) << peer->output();
    EXPECT_THAT(peer->output(), HasSubstr("did not hear from 1 neighbour(s) within "
                                          "startup_timeout_ms = 1500"));
    EXPECT_THAT(peer->output(), HasSubstr("peer " + std::to_string(missing) + " at " +
                                          local_endpoint(e.base_port + missing)));
  }
  EXPECT_THAT(peer0->output(), Not(HasSubstr("peer 1 at")));
  EXPECT_THAT(peer1->output(), Not(HasSubstr("peer 0 at")));
}

}  // namespace
}  // namespace fastk::systest
