// `fastk run` end to end: every peer as a process over ZeroMQ, outputs collected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/system/system_support.h"

namespace fastk::systest {
namespace {

using ::testing::HasSubstr;

TEST(RunCli, RunsEveryPeerAndCollectsTheOutputs) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = tiny_experiment(3, 60);
  const auto config = write_config(dir, e);
  FastkProcess launcher({"run", config.string(), "--no-plots", "--eval-every", "20"});
  const auto status = launcher.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << launcher.output();
  ASSERT_TRUE(status->ok()) << launcher.output();

  const auto run = run_dir(dir);
  EXPECT_EQ(count_lines(run / "iterations.csv"), 1 + e.peers * e.iterations);
  EXPECT_EQ(count_lines(run / "evaluation.csv"), 1 + 3);  // iterations 20, 40, 60
  EXPECT_TRUE(std::filesystem::exists(run / "config.toml"));
  const auto summary = read_json(run / "summary.json");
  EXPECT_EQ(summary.value("ok", false), true);
  EXPECT_EQ(summary.value("peers", 0), e.peers);
  EXPECT_EQ(summary.value("peers_reported", 0), e.peers);
  EXPECT_EQ(summary.value("final_iteration", 0), e.iterations);
  EXPECT_GT(summary.value("bytes_per_iteration", 0.0), 0.0);
  for (int i = 0; i < e.peers; ++i) {
    EXPECT_EQ(summary["per_peer"][i].value("iterations", 0), e.iterations);
    EXPECT_TRUE(summary["per_peer"][i]["rejected_frames"].empty());
  }
  EXPECT_THAT(launcher.output(), HasSubstr("outputs in " + run.string()));
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

}  // namespace
}  // namespace fastk::systest
