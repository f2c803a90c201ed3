// `fastk run` end to end: every peer as a process over ZeroMQ, outputs collected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

using ::testing::HasSubstr;

TEST(RunCli, RunsEveryPeerAndCollectsTheOutputs) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(3, 60);
  const auto config = write_config(dir, e);
  FastkProcess launcher(
      {"run", config.string(), "--no-plots", "--set", "run.eval_interval_s=0.005"});
  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << launcher.output();
  ASSERT_TRUE(status->ok()) << launcher.output();

  const auto run = run_dir(dir);
  EXPECT_EQ(count_lines(run / "iterations.csv"), 1 + e.peers * e.iterations);
  // The mean model at the instants every peer saved a snapshot, and of the final models.
  EXPECT_GE(count_lines(run / "evaluation.csv"), 1 + 2);
  // Snapshots only serve the evaluation; they are deleted once it is written.
  EXPECT_FALSE(std::filesystem::exists(run / "peers" / "peer-0" / "snapshots.csv"));
  EXPECT_TRUE(std::filesystem::exists(run / "config.toml"));
  const auto summary = read_json(run / "summary.json");
  EXPECT_EQ(summary.value("ok", false), true);
  EXPECT_EQ(summary.value("peers", 0), e.peers);
  EXPECT_EQ(summary.value("peers_reported", 0), e.peers);
  EXPECT_GT(summary.value("final_time_s", 0.0), 0.0);
  EXPECT_DOUBLE_EQ(summary.value("final_time_s", 0.0), summary.value("training_phase_s", -1.0));
  EXPECT_GT(summary.value("final_test_accuracy", 0.0), 0.5);
  EXPECT_GT(summary.value("bytes_per_iteration", 0.0), 0.0);
  for (int i = 0; i < e.peers; ++i) {
    EXPECT_EQ(summary["per_peer"][i].value("iterations", 0), e.iterations);
    EXPECT_EQ(summary["per_peer"][i].value("end", ""), "iterations");
    EXPECT_TRUE(summary["per_peer"][i]["rejected_frames"].empty());
  }
  EXPECT_THAT(launcher.output(), HasSubstr("outputs in " + run.string()));
}

TEST(RunCli, KeepSnapshotsLeavesEverySnapshotTheEvaluationUsed) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(3, 60);
  const auto config = write_config(dir, e);
  FastkProcess launcher({"run", config.string(), "--no-plots", "--keep-snapshots", "--set",
                         "run.eval_interval_s=0.005"});
  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << launcher.output();
  ASSERT_TRUE(status->ok()) << launcher.output();
  const auto run = run_dir(dir);
  for (int i = 0; i < e.peers; ++i) {
    const auto peer = run / "peers" / ("peer-" + std::to_string(i));
    const auto rows = count_lines(peer / "snapshots.csv");
    EXPECT_GE(rows, 1 + 1) << peer;
    int models = 0;
    for (const auto& entry : std::filesystem::directory_iterator(peer)) {
      const auto name = entry.path().filename().string();
      if (name.starts_with("model-t") && name.ends_with(".f32")) ++models;
    }
    EXPECT_EQ(models + 1, rows) << peer;
  }
}

// Peers started at different times end at their own budget; a peer that ended must not
// iterate on during its goodbye (it once did, which stalled the others until a timeout).
TEST(RunCli, TheTimeBudgetEndsEveryPeer) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(3, 100000000);
  const auto config = write_config(dir, e);
  FastkProcess launcher({"run", config.string(), "--no-plots", "--set", "run.duration_s=1.5"});
  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << launcher.output();
  ASSERT_TRUE(status->ok()) << launcher.output();
  const auto summary = read_json(run_dir(dir) / "summary.json");
  std::int64_t iterations = 0;
  for (int i = 0; i < e.peers; ++i) {
    const auto& peer = summary["per_peer"][i];
    EXPECT_EQ(peer.value("end", ""), "duration") << peer.dump();
    EXPECT_GE(peer.value("elapsed_s", 0.0), 1.4);
    EXPECT_LT(peer.value("elapsed_s", 0.0), 3.0);
    EXPECT_LT(peer.value("iterations", 0), e.iterations);
    iterations += peer.value("iterations", std::int64_t{0});
  }
  // Every iteration a peer reports is in the merged file, none more.
  EXPECT_EQ(count_lines(run_dir(dir) / "iterations.csv"), 1 + iterations);
}

// A second run on the ports a live run uses is refused before it touches anything: it names
// the endpoints and base_port, and the live run ends well with all its outputs.
TEST(RunCli, SecondRunsOnTakenPortsOrInTheSameFolderAreRefusedAndTheFirstIsUnharmed) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(3, 100000000);
  e.duration_s = 3;
  const auto config = write_config(dir, e);
  FastkProcess first({"run", config.string(), "--no-plots"});
  // Every peer has bound its socket once it is ready (a socket file alone may be stale).
  const auto ready = [&] {
    for (int i = 0; i < e.peers; ++i) {
      std::ifstream log(run_dir(dir) / "logs" / ("peer-" + std::to_string(i) + ".log"));
      const std::string text{std::istreambuf_iterator<char>(log), {}};
      if (text.find("@ready") == std::string::npos) return false;
    }
    return true;
  };
  const auto until = Clock::now() + Seconds(30);
  while (!ready() && Clock::now() < until) first.pump(std::chrono::milliseconds(20));
  ASSERT_TRUE(ready()) << first.output();

  FastkProcess second({"run", config.string(), "--no-plots"});
  const auto refused = second.wait(Seconds(60));
  ASSERT_TRUE(refused.has_value()) << second.output();
  EXPECT_EQ(refused->code, 1) << second.output();
  EXPECT_THAT(second.output(), HasSubstr("another run or program holds those ports"));
  EXPECT_THAT(second.output(),
              HasSubstr(local_endpoint(e.base_port) + " (Address already in use)"));
  EXPECT_THAT(second.output(),
              HasSubstr("[cluster] base_port (now " + std::to_string(e.base_port)));

  // On other ports, with the same run name: it never touches the live run's folder (it once
  // emptied its peers/ folder); by default it moves to a folder of its own, and given the
  // live folder as --output it is refused.
  const std::string other_ports = "cluster.base_port=" + std::to_string(free_base_port(e.peers));
  FastkProcess refused_folder({"run", config.string(), "--no-plots", "--set", other_ports,
                               "--output", run_dir(dir).string()});
  const auto locked = refused_folder.wait(Seconds(60));
  ASSERT_TRUE(locked.has_value()) << refused_folder.output();
  EXPECT_EQ(locked->code, 1) << refused_folder.output();
  EXPECT_THAT(refused_folder.output(), HasSubstr("already holds files"));
  FastkProcess moved(
      {"run", config.string(), "--no-plots", "--set", other_ports, "--set", "run.duration_s=0.5"});
  const auto elsewhere = moved.wait(Seconds(60));
  ASSERT_TRUE(elsewhere.has_value() && elsewhere->ok()) << moved.output();
  EXPECT_THAT(moved.output(), HasSubstr("holds an earlier run: this one writes "));
  EXPECT_TRUE(std::filesystem::exists(dir / "runs" / "sys-2" / "summary.json"));

  const auto status = first.wait(Seconds(60));
  ASSERT_TRUE(status.has_value() && status->ok()) << first.output();
  const auto summary = read_json(run_dir(dir) / "summary.json");
  EXPECT_EQ(summary["peers_reported"], e.peers) << summary.dump();
}

TEST(RunCli, StopsOnceTheMeanModelReachesTheTarget) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(3, 100000000);
  const auto config = write_config(dir, e);
  FastkProcess launcher({"run", config.string(), "--no-plots", "--set", "run.target_accuracy=0.8",
                         "--set", "run.stop_at_target=true", "--set", "run.eval_interval_s=0.05",
                         "--set", "run.duration_s=60"});
  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << launcher.output();
  ASSERT_TRUE(status->ok()) << launcher.output();
  const auto summary = read_json(run_dir(dir) / "summary.json");
  ASSERT_FALSE(summary["time_to_target_s"].is_null()) << summary.dump();
  EXPECT_LT(summary["time_to_target_s"].get<double>(), 30.0);
  for (int i = 0; i < e.peers; ++i) {
    EXPECT_EQ(summary["per_peer"][i].value("end", ""), "target") << summary.dump();
  }
  EXPECT_THAT(launcher.output(), HasSubstr("time to target (accuracy 0.8): "));
}

TEST(RunCli, AConfigErrorNamesTheTomlPath) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 200);
  e.extra = "[stragglers]\ncompute_ms = 3\n";  // the key is compute_s
  const auto config = write_config(dir, e);
  FastkProcess launcher({"run", config.string(), "--no-plots"});
  const auto status = launcher.wait(Seconds(60));
  ASSERT_TRUE(status.has_value()) << launcher.output();
  EXPECT_NE(status->code, 0);
  EXPECT_THAT(launcher.output(), HasSubstr("stragglers.compute_ms: unknown key"));
  EXPECT_FALSE(std::filesystem::exists(run_dir(dir) / "peers"));  // no peer was started
}

// The README's sequence on one config: a real run, then simulations, a calibration and a
// report of the same config. Each writes a folder of its own, named on its output; the real
// run's files stay as they were, and an explicit --output that holds files is refused.
TEST(RunCli, NoCommandWritesOverAnotherRun) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const auto config = write_config(dir, tiny_experiment(3, 40));
  FastkProcess run({"run", config.string(), "--no-plots"});
  const auto ran = run.wait(Seconds(120));
  ASSERT_TRUE(ran && ran->ok()) << run.output();
  std::map<std::string, std::string> before;
  for (const auto& file : files_of(run_dir(dir))) before[file] = read_bytes(run_dir(dir) / file);

  auto fastk = [](std::vector<std::string> args) {
    FastkProcess p(std::move(args));
    const auto status = p.wait(Seconds(120));
    return std::pair{status && status->ok(), p.output()};
  };
  const auto sim = fastk({"sim", config.string(), "--no-plots", "--quiet"});
  ASSERT_TRUE(sim.first) << sim.second;
  EXPECT_THAT(sim.second, HasSubstr("outputs: " + (dir / "runs" / "sys-sim").string()));
  const auto again = fastk({"sim", config.string(), "--no-plots", "--quiet"});
  ASSERT_TRUE(again.first) << again.second;
  EXPECT_THAT(again.second, HasSubstr("holds an earlier run: this one writes "));
  EXPECT_TRUE(std::filesystem::exists(dir / "runs" / "sys-sim-2" / "summary.json"));
  const auto second_run = fastk({"run", config.string(), "--no-plots"});
  ASSERT_TRUE(second_run.first) << second_run.second;
  EXPECT_TRUE(std::filesystem::exists(dir / "runs" / "sys-2" / "summary.json"));
  const auto calibrated =
      fastk({"calibrate", config.string(), "--reference-iterations", "20", "--repeats", "5"});
  ASSERT_TRUE(calibrated.first) << calibrated.second;
  EXPECT_TRUE(std::filesystem::exists(dir / "runs" / "sys-calibration" / "calibration.json"));
  const auto refused = fastk({"sim", config.string(), "--output", run_dir(dir).string()});
  EXPECT_FALSE(refused.first);
  EXPECT_THAT(refused.second,
              HasSubstr("--output " + run_dir(dir).string() + " already holds files"));
  const auto reported = fastk({"report", run_dir(dir).string()});
  EXPECT_FALSE(reported.first);  // reported already: summary.json is not rebuilt
  EXPECT_THAT(reported.second, HasSubstr("is reported already"));

  std::map<std::string, std::string> after;
  for (const auto& file : files_of(run_dir(dir))) after[file] = read_bytes(run_dir(dir) / file);
  EXPECT_EQ(before, after);
}

// What fails before any peer starts leaves no run folder behind: a peer id of [stragglers]
// beyond the graph (named, before any peer is started), and a calibration made for another
// model (found once the folder was claimed).
TEST(RunCli, AFailedLaunchLeavesNoRunFolder) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const auto config = write_config(dir, tiny_experiment(3, 40));
  FastkProcess bad_ids({"run", config.string(), "--set", "stragglers.slow_peers=[9]"});
  const auto status = bad_ids.wait(Seconds(60));
  ASSERT_TRUE(status.has_value()) << bad_ids.output();
  EXPECT_NE(status->code, 0);
  EXPECT_THAT(bad_ids.output(), HasSubstr("slow_peers: peer 9 is not in [0, 3)"));
  EXPECT_THAT(bad_ids.output(), ::testing::Not(HasSubstr("peer 0")));
  EXPECT_FALSE(std::filesystem::exists(run_dir(dir)));

  const auto calibration = dir / "other.json";
  FastkProcess calibrate({"calibrate", config.string(), "--set", "model.kind=logistic_regression",
                          "--reference-iterations", "20", "--repeats", "5", "-f",
                          calibration.string()});
  const auto calibrated = calibrate.wait(Seconds(120));
  ASSERT_TRUE(calibrated && calibrated->ok()) << calibrate.output();
  FastkProcess mismatched({"run", config.string(), "--calibration", calibration.string()});
  const auto failed = mismatched.wait(Seconds(60));
  ASSERT_TRUE(failed.has_value()) << mismatched.output();
  EXPECT_NE(failed->code, 0) << mismatched.output();
  EXPECT_FALSE(std::filesystem::exists(run_dir(dir))) << mismatched.output();
}

}  // namespace
}  // namespace fastk::systest

namespace fastk::systest {
namespace {

// A full disk (a small tmpfs mounted over the output folder, in a mount namespace of the
// test's own) at two points of a run: while the peers write their snapshots and logs, and
// when the launcher merges the results. Either way fastk run exits 1 naming a file and "No
// space left on device", and leaves no empty or temporary file that looks like a result.
TEST(RunCli, AFullDiskIsAnErrorNamingTheFileAndLeavesNoEmptyResult) {
  // A mount namespace of the test's own; without root, in a user namespace too (-r).
  const std::string unshare = ::geteuid() == 0 ? "unshare -m" : "unshare -rm";
  ASSERT_EQ(std::system((unshare + " true").c_str()), 0)
      << unshare << " failed: the kernel must allow mount (and, without root, user) namespaces";
  for (const char* size : {"16k", "160k"}) {
    const auto dir = testutil::fresh_test_dir("fastk_sys");
    const auto config = write_config(dir, tiny_experiment(4, 300));
    const auto out = dir / "runs";
    const auto log = dir / "run.log";
    std::filesystem::create_directories(out);
    // Inside the namespace: the run, its exit code, and what it left (the tmpfs goes with it).
    const auto script = dir / "full-disk.sh";
    std::ofstream(script) << "mount -t tmpfs -o size=" << size << " tmpfs " << out.string()
                          << " || exit 2\n"
                          << FASTK_BINARY " run " << config.string() << " --no-plots > "
                          << log.string() << " 2>&1\n"
                          << "echo \"exit $?\" >> " << log.string() << "\n"
                          << "find " << out.string()
                          << " -type f \\( -size 0 -o -name '*.tmp' \\) -printf 'left %P\\n' >> "
                          << log.string() << "\n";
    ASSERT_EQ(std::system((unshare + " sh " + script.string()).c_str()), 0);
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_THAT(text, HasSubstr("exit 1")) << size << ":\n" << text;
    EXPECT_THAT(text, HasSubstr("No space left on device")) << size << ":\n" << text;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with("left ")) continue;
      const std::string left = line.substr(5);  // relative to the output folder
      // Logs, and a failed peer's own log of its iterations, are logs rather than results.
      // The run folder's lock file is empty by nature.
      const bool a_log =
          left == "sys/.lock" ||
          (!left.ends_with(".tmp") &&
           (left.starts_with("sys/logs/") ||
            (left.starts_with("sys/peers/") &&
             (left.ends_with("/iterations.csv") || left.ends_with("/neighbours.csv")))));
      EXPECT_TRUE(a_log) << size << ": an empty or temporary result: " << left;
    }
  }
}

}  // namespace
}  // namespace fastk::systest
