// Gradient coding over real peers (docs/coding.md §7): `fastk run` with FRC in every neighbourhood
// and one persistently slow peer completes and reaches the accuracy of the uncoded run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

struct CodedRun {
  nlohmann::json summary;
  int rows = 0;
  int decodable = 0;
  double coded_members = 0;
  double bytes = 0;  // neighbours.csv: the usual payload bytes of a neighbour's iteration
};

// The median of the non-zero values of one numeric column of a CSV file.
double median_nonzero(const std::filesystem::path& file, const std::string& name) {
  std::ifstream csv(file);
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  for (std::stringstream s(line); std::getline(s, line, ',');) header.push_back(line);
  const auto at =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  EXPECT_LT(at, header.size()) << name << " in " << file;
  std::vector<double> values;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    for (std::stringstream s(line); std::getline(s, line, ',');) cells.push_back(line);
    if (const double v = std::stod(cells.at(at)); v != 0) values.push_back(v);
  }
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2),
                   values.end());
  return values[values.size() / 2];
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
  out.bytes = median_nonzero(run_dir(dir) / "neighbours.csv", "bytes");
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

// A run whose every step decoded its neighbourhood, that refused and dropped nothing, and
// learnt.
void expect_every_step_decoded(const CodedRun& run) {
  ASSERT_TRUE(run.summary.value("ok", false));
  ASSERT_GT(run.rows, 0);
  EXPECT_EQ(run.decodable, run.rows);
  EXPECT_GT(run.summary.value("final_test_accuracy", 0.0), 0.8);
  for (const auto& peer : run.summary["per_peer"]) {
    EXPECT_TRUE(peer["rejected_frames"].empty()) << peer.dump();
    EXPECT_EQ(peer.value("dropped_messages", 0), 0) << peer.dump();
  }
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
// peer 1 twenty times slower both finish every iteration decoded, an mds neighbour's
// iteration is 3/4 of frc's bytes, and both learn.
TEST(CodedRun, MdsSharesAreHalfAGradientOnTheWire) {
  const CodedRun frc = run_with("[coding]\nscheme = \"frc\"\nstragglers = 2\n", 8, "hypercube");
  const CodedRun mds =
      run_with("[coding]\nscheme = \"mds\"\nstragglers = 1\nsub_blocks = 2\n", 8, "hypercube");
  expect_every_step_decoded(frc);
  expect_every_step_decoded(mds);
  // What a neighbour sends per iteration: a model and a gradient (frc) against a model and
  // half a gradient (mds). The median row holds one iteration's messages; rows of a late or
  // replaced message hold none or two.
  EXPECT_NEAR(mds.bytes / frc.bytes, 0.75, 0.01) << "mds " << mds.bytes << " frc " << frc.bytes;
}

// Tandon et al.'s cyclic codes and the communication-efficient cyclic code on 8 real peers of a
// hypercube (one cyclic block of 3 per neighbourhood, s = 1: any 2 of 3 shares decode it, with
// coefficients of both signs). With peer 1 twenty times slower every iteration decodes, no
// share is refused as not in the code, both learn, and a cyclic_mds share with sub_blocks = 2
// makes a neighbour's iteration 3/4 of crc's bytes.
TEST(CodedRun, CyclicCodesDecodeOnRealPeers) {
  const CodedRun crc = run_with("[coding]\nscheme = \"crc\"\nstragglers = 1\n", 8, "hypercube");
  const CodedRun ce = run_with(
      "[coding]\nscheme = \"cyclic_mds\"\nstragglers = 1\nsub_blocks = 2\n", 8, "hypercube");
  expect_every_step_decoded(crc);
  expect_every_step_decoded(ce);
  EXPECT_NEAR(ce.bytes / crc.bytes, 0.75, 0.01)
      << "cyclic_mds " << ce.bytes << " crc " << crc.bytes;
}

}  // namespace
}  // namespace fastk::systest
