// `fastk report` on the folder of peers started the way mpirun starts them (each `fastk node
// CONFIG` with its rank in OMPI_COMM_WORLD_RANK, no launcher) builds what `fastk run` builds
// on the same config: the same files with the same schemas and, under policy full, the same
// final mean-model evaluation.
#include <gtest/gtest.h>

#include "tests/system/system_support.h"

namespace fastk::systest {
namespace {

std::vector<std::string> last_row(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  std::vector<std::string> cells;
  std::stringstream row(last);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  return cells;
}

TEST(Report, PeersStartedByRankGetWhatFastkRunBuilds) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 100, "full");
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir, e);
  std::vector<std::unique_ptr<node::ChildProcess>> peers;
  for (int rank = 0; rank < e.peers; ++rank) {
    peers.push_back(std::make_unique<node::ChildProcess>(
        std::vector<std::string>{"env", "OMPI_COMM_WORLD_RANK=" + std::to_string(rank),
                                 FASTK_BINARY, "node", config.string()}));
  }
  for (auto& p : peers) {
    std::string said;
    const auto status = p->wait([&](const std::string& line) { said += line + "\n"; });
    ASSERT_TRUE(status.ok()) << said;
  }
  EXPECT_FALSE(std::filesystem::exists(run_dir(dir) / "summary.json"));
  FastkProcess report({"report", run_dir(dir).string(), "--config", config.string(), "--no-plots"});
  const auto reported = report.wait(Seconds(120));
  ASSERT_TRUE(reported && reported->ok()) << report.output();
  const auto by_hand = dir / "by_hand";
  std::filesystem::rename(run_dir(dir), by_hand);

  FastkProcess run({"run", config.string(), "--no-plots"});
  const auto status = run.wait(Seconds(120));
  ASSERT_TRUE(status && status->ok()) << run.output();
  const auto launched = run_dir(dir);

  EXPECT_EQ(files_of(by_hand), files_of(launched));
  for (const auto& file : files_of(launched)) {
    if (file.ends_with(".json")) {
      EXPECT_EQ(keys_of(read_json(by_hand / file)), keys_of(read_json(launched / file))) << file;
    } else if (file.ends_with(".csv")) {
      EXPECT_EQ(first_line(by_hand / file), first_line(launched / file)) << file;
    }
  }
  // The final mean model (columns after the time) is the same model, so the same numbers.
  const auto a = last_row(by_hand / "evaluation.csv"), b = last_row(launched / "evaluation.csv");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(a.begin() + 1, a.end()),
            std::vector<std::string>(b.begin() + 1, b.end()));
  EXPECT_EQ(count_lines(by_hand / "iterations.csv"), 1 + e.peers * e.iterations);
  EXPECT_EQ(read_json(by_hand / "summary.json")["peers_reported"], e.peers);
}

TEST(Report, MissingPeersAreNamedAndTheRestReported) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(3, 50, "full");
  const auto config = write_config(dir, e);
  FastkProcess run({"run", config.string(), "--no-plots"});
  ASSERT_TRUE(run.wait(Seconds(120)).has_value());
  // As if peer 2's folder had not been copied back, and nothing reported yet.
  std::filesystem::remove_all(peer_dir(run_dir(dir), 2));
  std::filesystem::remove(run_dir(dir) / "summary.json");
  FastkProcess report({"report", run_dir(dir).string(), "--no-plots"});
  const auto status = report.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << report.output();
  EXPECT_EQ(status->code, 1) << report.output();
  EXPECT_NE(report.output().find("peer 2 has no folder"), std::string::npos) << report.output();
  EXPECT_EQ(read_json(run_dir(dir) / "summary.json")["peers_reported"], 2);
  FastkProcess again({"report", run_dir(dir).string(), "--no-plots"});
  const auto refused = again.wait(Seconds(60));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, 1);
  EXPECT_NE(again.output().find("reported already (summary.json): --force"), std::string::npos)
      << again.output();
}

}  // namespace
}  // namespace fastk::systest
