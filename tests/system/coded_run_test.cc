// Gradient coding over real peers (docs/coding.md §7): `fastk run` with FRC in every neighbourhood
// and one persistently slow peer completes and reaches the accuracy of the uncoded run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/system/system_support.h"

namespace fastk::systest {
namespace {

struct CodedRun {
  nlohmann::json summary;
  int rows = 0;
  int decodable = 0;
  double coded_members = 0;
  double bytes = 0;  // neighbours.csv: payload bytes received, summed over every row
};

// Sums one numeric column of a CSV file.
double column_sum(const std::filesystem::path& file, const std::string& name) {
  std::ifstream csv(file);
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  for (std::stringstream s(line); std::getline(s, line, ',');) header.push_back(line);
  const auto at =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  EXPECT_LT(at, header.size()) << name << " in " << file;
  double sum = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    for (std::stringstream s(line); std::getline(s, line, ',');) cells.push_back(line);
    sum += std::stod(cells.at(at));
  }
  return sum;
}

// iterations.csv columns by name.
CodedRun run_with(const std::string& coding, int seed_port_peers,
                  const std::string& topology = "ring") {
  const auto dir = testutil::fresh_test_dir("fastk_sys_coded");
  TinyExperiment e = tiny_experiment(seed_port_peers, 150);
  e.topology = topology;
  // Peer 1 is 20x slower at every gradient (a real sleep after each computation).
  e.extra = "[stragglers]\nslow_peers = [1]\nslow_factors = [20.0]\n" + coding;
  const auto config = write_config(dir, e);
  FastkProcess launcher({"run", config.string(), "--no-plots"});
  const auto status = launcher.wait(Seconds(180));
  EXPECT_TRUE(status.has_value()) << launcher.output();
  EXPECT_TRUE(status && status->ok()) << launcher.output();
  CodedRun out;
  out.summary = read_json(run_dir(dir) / "summary.json");
  out.bytes = column_sum(run_dir(dir) / "neighbours.csv", "bytes");
  std::ifstream csv(run_dir(dir) / "iterations.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  for (std::stringstream s(line); std::getline(s, line, ',');) header.push_back(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t decodable = column("decodable"), members = column("coded_members");
  EXPECT_LT(decodable, header.size());
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    for (std::stringstream s(line); std::getline(s, line, ',');) cells.push_back(line);
    ++out.rows;
    out.decodable += std::stoi(cells.at(decodable));
    out.coded_members += std::stod(cells.at(members));
  }
  return out;
}

TEST(CodedRun, FrcWithASlowPeerFinishesAndMatchesTheUncodedAccuracy) {
  const CodedRun uncoded = run_with("", 6);
  const CodedRun coded = run_with("[coding]\nscheme = \"frc\"\nstragglers = 1\n", 6);
  ASSERT_TRUE(uncoded.summary.value("ok", false));
  ASSERT_TRUE(coded.summary.value("ok", false));
  // Coded peers that fall behind skip ahead (docs/protocol.md §2.5): every one reaches the end.
  for (const auto& peer : coded.summary["per_peer"]) EXPECT_EQ(peer.value("end", ""), "iterations");
  for (const auto& peer : coded.summary["per_peer"]) {
    EXPECT_TRUE(peer["rejected_frames"].empty()) << peer.dump();
  }
  // Every coded step decoded its whole neighbourhood (no deadline is set) from the own
  // gradient plus one coded gradient per block at least.
  ASSERT_GT(coded.rows, 0);
  EXPECT_EQ(coded.decodable, coded.rows);
  EXPECT_GE(coded.coded_members / coded.rows, 2.0);
  const double uncoded_accuracy = uncoded.summary.value("final_test_accuracy", 0.0);
  const double coded_accuracy = coded.summary.value("final_test_accuracy", 0.0);
  EXPECT_GT(uncoded_accuracy, 0.8);
  EXPECT_GE(coded_accuracy, uncoded_accuracy - 0.02)
      << "coded " << coded_accuracy << " vs uncoded " << uncoded_accuracy;
}

// The communication-efficient scheme on 8 real peers of a hypercube (3 neighbours, one block
// of 3): frc with s = 2 sends each neighbour its model and a whole gradient sum, mds with
// s = 1, m = 2 its model and a half-length share, and any 2 shares cover the block. With
// peer 1 twenty times slower both finish every iteration decoded, mds receives 3/4 of frc's
// bytes, and both reach the uncoded accuracy class.
TEST(CodedRun, MdsSharesAreHalfAGradientOnTheWire) {
  const CodedRun frc = run_with("[coding]\nscheme = \"frc\"\nstragglers = 2\n", 8, "hypercube");
  const CodedRun mds =
      run_with("[coding]\nscheme = \"mds\"\nstragglers = 1\nsub_blocks = 2\n", 8, "hypercube");
  for (const CodedRun* run : {&frc, &mds}) {
    ASSERT_TRUE(run->summary.value("ok", false));
    ASSERT_GT(run->rows, 0);
    EXPECT_EQ(run->decodable, run->rows);
    EXPECT_GT(run->summary.value("final_test_accuracy", 0.0), 0.8);
    for (const auto& peer : run->summary["per_peer"]) {
      EXPECT_TRUE(peer["rejected_frames"].empty()) << peer.dump();
      EXPECT_EQ(peer.value("dropped_messages", 0), 0) << peer.dump();
    }
  }
  // Own gradient plus at least the 2 shares that cover the block.
  EXPECT_GE(mds.coded_members / mds.rows, 3.0);
  // Per row: a model and a gradient (frc) against a model and half a gradient (mds), up to
  // the halves' rounding and rows that count a late message twice or not at all.
  EXPECT_NEAR((mds.bytes / mds.rows) / (frc.bytes / frc.rows), 0.75, 0.05)
      << "mds " << mds.bytes << " bytes over " << mds.rows << " rows, frc " << frc.bytes << " over "
      << frc.rows;
}

}  // namespace
}  // namespace fastk::systest
