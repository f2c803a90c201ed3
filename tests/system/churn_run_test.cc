// [churn] on real peers (docs/simulation.md §9): `fastk run` asks a peer to leave at its time
// (it says goodbye and exits, keeping what a comeback needs) and starts it again at its join
// time; the peer joins from its neighbours' models and the run ends with every peer at its
// last iteration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

using ::testing::HasSubstr;

TEST(ChurnRun, APeerLeavesOnScheduleAndComesBackToTheEnd) {
  const auto dir = testutil::fresh_test_dir("fastk_churn");
  // Every message takes 5 ms: 300 iterations of `full` take at least 1.5 s, so the leave at
  // 0.3 s and the comeback at 0.8 s fall inside the run.
  TinyExperiment e = tiny_experiment(4, 300, "full");
  e.extra = "[stragglers]\nlink_s = 0.005\n[churn]\nevents = [\"0.3,2,leave\", \"0.8,2,join\"]\n";
  e.peer_timeout_ms = 5000;
  const auto config = write_config(dir, e);
  FastkProcess run({"run", config.string(), "--no-plots"});
  const auto status = run.wait(Seconds(120));
  ASSERT_TRUE(status && status->ok()) << run.output();
  EXPECT_THAT(run.output(), HasSubstr("fastk run: peer 2 leaves ([churn]")) << run.output();
  EXPECT_THAT(run.output(), HasSubstr("fastk run: peer 2 comes back ([churn]")) << run.output();
  const auto folder = run_dir(dir);
  for (int i = 0; i < e.peers; ++i) {
    const auto summary = read_json(peer_dir(folder, i) / "summary.json");
    EXPECT_EQ(summary.value("iterations", 0), e.iterations) << "peer " << i;
    EXPECT_TRUE(summary.value("finished", false)) << "peer " << i;
  }
  // Its neighbours saw it leave with a goodbye while they went on.
  const auto neighbour = read_json(peer_dir(folder, 1) / "summary.json");
  bool saw_bye = false;
  for (const auto& d : neighbour["departures"]) {
    saw_bye = saw_bye || (d.value("peer", -1) == 2 && d.value("how", "") == "bye");
  }
  EXPECT_TRUE(saw_bye) << neighbour.dump(2);
  // Peer 2's rows: those before it left, then from the tag it joined at; one run's timeline.
  std::ifstream csv(folder / "iterations.csv");
  std::string line;
  std::int64_t rows = 0, previous = -1, gap = 0;
  while (std::getline(csv, line)) {
    if (!line.starts_with("2,")) continue;
    const std::int64_t k = std::stoll(line.substr(2));
    gap = std::max(gap, k - previous);
    previous = k;
    ++rows;
  }
  EXPECT_EQ(previous, e.iterations - 1);
  EXPECT_LT(rows, e.iterations);
  EXPECT_GT(gap, 1) << "it joined at its neighbours' newest tag, past where it left";
}

}  // namespace
}  // namespace fastk::systest
