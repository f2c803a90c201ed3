// `fastk report` on the folder of peers started the way mpirun starts them (each `fastk node
// CONFIG` with its rank in OMPI_COMM_WORLD_RANK, no launcher) builds what `fastk run` builds
// on the same config: the same files with the same schemas and, under policy full, the same
// final mean-model evaluation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/system_support.h"

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
  // No --config: the peers' folders name the config they ran.
  FastkProcess report({"report", run_dir(dir).string(), "--no-plots"});
  const auto reported = report.wait(Seconds(120));
  ASSERT_TRUE(reported && reported->ok()) << report.output();
  EXPECT_THAT(report.output(), ::testing::HasSubstr("config " + config.string()));
  const auto by_hand = dir / "by_hand";
  std::filesystem::rename(run_dir(dir), by_hand);

  FastkProcess run({"run", config.string(), "--no-plots"});
  const auto status = run.wait(Seconds(120));
  ASSERT_TRUE(status && status->ok()) << run.output();
  const auto launched = run_dir(dir);

  // The same files, the peers' own CSVs aside (a report keeps them).
  auto report_files = files_of(by_hand);
  std::erase_if(report_files, [](const std::string& f) {
    return f.starts_with("peers/") && f.ends_with(".csv");
  });
  EXPECT_EQ(report_files, files_of(launched));
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
  // A ring: two neighbours per peer and iteration.
  EXPECT_EQ(count_lines(by_hand / "neighbours.csv"), 1 + 2 * e.peers * e.iterations);
  EXPECT_EQ(read_json(by_hand / "summary.json")["peers_reported"], e.peers);
}

// Peer 2's folder is not there (not copied back): the report names it and reports the
// others; once the folder is there (and summary.json removed) the report is whole, with
// every peer's rows.
TEST(Report, MissingPeersAreNamedAndTheReportCanBeMadeAgain) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(3, 50, "full");
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir, e);
  std::vector<std::unique_ptr<FastkProcess>> peers = start_peers(config, run_dir(dir), e.peers);
  for (auto& p : peers) ASSERT_TRUE(p->wait(Seconds(120)).has_value()) << p->output();
  const auto away = dir / "peer-2-elsewhere";
  std::filesystem::rename(peer_dir(run_dir(dir), 2), away);
  FastkProcess report({"report", run_dir(dir).string(), "--config", config.string(), "--no-plots"});
  const auto status = report.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << report.output();
  EXPECT_EQ(status->code, 1) << report.output();
  EXPECT_NE(report.output().find("peer 2 has no folder"), std::string::npos) << report.output();
  const auto summary = read_json(run_dir(dir) / "summary.json");
  EXPECT_EQ(summary["peers_reported"], 2);
  EXPECT_EQ(summary["ok"], false);
  FastkProcess again({"report", run_dir(dir).string(), "--config", config.string(), "--no-plots"});
  const auto refused = again.wait(Seconds(60));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, 1);
  EXPECT_NE(again.output().find("reported already (summary.json); to report it again"),
            std::string::npos)
      << again.output();
  EXPECT_EQ(count_lines(run_dir(dir) / "iterations.csv"), 1 + 2 * e.iterations);

  std::filesystem::rename(away, peer_dir(run_dir(dir), 2));
  std::filesystem::remove(run_dir(dir) / "summary.json");
  FastkProcess whole({"report", run_dir(dir).string(), "--config", config.string(), "--no-plots"});
  const auto done = whole.wait(Seconds(120));
  ASSERT_TRUE(done && done->ok()) << whole.output();
  EXPECT_EQ(read_json(run_dir(dir) / "summary.json")["peers_reported"], 3);
  EXPECT_EQ(read_json(run_dir(dir) / "summary.json")["ok"], true);
  EXPECT_EQ(count_lines(run_dir(dir) / "iterations.csv"), 1 + 3 * e.iterations);
}

}  // namespace
}  // namespace fastk::systest
