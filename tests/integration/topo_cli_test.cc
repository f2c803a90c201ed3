// Runs the real `fastk topo` executable and checks what a user sees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_fastk.h"
#include "tests/support/temp_dir.h"

namespace {

using ::testing::HasSubstr;

using Result = fastk::testing::CommandResult;

Result run(const std::string& args) { return fastk::testing::run_fastk(args); }

std::filesystem::path temp_dir() { return fastk::testutil::fresh_test_dir("fastk_cli"); }

TEST(TopoCli, TorusReportShowsTheKnownGap) {
  Result r = run("topo torus --rows 4 --cols 4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("topology torus 4x4"));
  EXPECT_THAT(r.output, HasSubstr("16 peers, 32 edges"));
  EXPECT_THAT(r.output, HasSubstr("0.4000 (spectral gap"));
}

TEST(TopoCli, JsonIsMachineReadable) {
  Result r = run("topo ring --peers 8 --json --matrix");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["peers"], 8);
  EXPECT_EQ(j["edges"], 8);
  EXPECT_NEAR(j["spectral_gap"].get<double>(), 1 - (1.0 / 3 + 2.0 / 3 * std::cos(M_PI / 4)), 1e-12);
  EXPECT_EQ(j["matrix"].size(), 8u);
  EXPECT_EQ(j["eigenvalues"].size(), 8u);
}

TEST(TopoCli, ConfigIsTheBaseAndFlagsOverrideIt) {
  auto dir = temp_dir();
  std::ofstream(dir / "exp.toml") << "[topology]\nkind = \"hypercube\"\npeers = 8\n";
  Result r = run("topo --config " + (dir / "exp.toml").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["diameter"], 3);
  r = run("topo --config " + (dir / "exp.toml").string() + " --peers 16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["diameter"], 4);
}

TEST(TopoCli, WritesDotAndReadsEdgeLists) {
  auto dir = temp_dir();
  std::ofstream(dir / "tri.txt") << "# triangle plus tail\n0 1\n1 2\n2 0\n2 3\n";
  Result r = run("topo edge_list --file " + (dir / "tri.txt").string() + " --dot " +
                 (dir / "g.dot").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("4 peers, 4 edges"));
  std::ifstream dot(dir / "g.dot");
  std::string text((std::istreambuf_iterator<char>(dot)), {});
  EXPECT_THAT(text, HasSubstr("2 -- 3 [label="));
}

TEST(TopoCli, OnePeerScheduleReportsItsPeriod) {
  Result r = run("topo one_peer_exponential --peers 8");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("time-varying, period 3 rounds"));
  EXPECT_THAT(r.output, HasSubstr("0.0000 over one period"));
  // Exact consensus takes the whole period, not one round.
  EXPECT_THAT(r.output, HasSubstr("3 gossip rounds (1 period(s) of 3)"));
}

// W as --matrix prints it reads back through --weights-file, bit for bit; a matrix written by
// hand with 6 decimals is accepted; a wrong sum is shown with the digits that make it wrong.
TEST(TopoCli, PrintedMatrixReadsBackAndSumsAreCheckedWithATolerance) {
  auto dir = temp_dir();
  Result r = run("topo ring --peers 4 --matrix");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string w = r.output.substr(r.output.find("W:\n") + 3);
  std::ofstream(dir / "w.txt") << w;
  r = run("topo ring --peers 4 --weights file --matrix --weights-file " + (dir / "w.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.substr(r.output.find("W:\n") + 3), w);

  std::ofstream(dir / "w6.txt") << "0.333333 0.333333 0 0.333333\n0.333333 0.333333 0.333333 0\n"
                                   "0 0.333333 0.333333 0.333333\n0.333333 0 0.333333 0.333333\n";
  r = run("topo ring --peers 4 --weights file --weights-file " + (dir / "w6.txt").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("error")));
  EXPECT_THAT(r.output, HasSubstr("symmetric, doubly stochastic"));

  std::ofstream(dir / "w8.txt") << "0.33333333 0.33333333 0 0.33333333\n"
                                   "0.33333333 0.33333333 0.33333333 0\n"
                                   "0 0.33333333 0.33333333 0.33333333\n"
                                   "0.3 0 0.33333333 0.33333333\n";
  r = run("topo ring --peers 4 --weights file --weights-file " + (dir / "w8.txt").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("row 3 sums to 0.96666666, not 1"));

  std::ofstream(dir / "identity.txt") << "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n";
  r = run("topo ring --peers 4 --weights file --weights-file " + (dir / "identity.txt").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning   lambda = 1: disagreement never shrinks"));
}

TEST(TopoCli, SurprisesAreSaidPlainly) {
  Result r = run("topo torus --peers 7");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("7 peers make a 1x7 torus, which is a ring"));
  r = run("topo edge_list --peers 4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("kind edge_list needs a file: fastk topo edge_list --file PATH"));
  r = run("topo --help");
  EXPECT_THAT(r.output, HasSubstr("apt-get install graphviz"));
}

// The communication-efficient code's placement, and the flags it refuses.
TEST(TopoCli, MdsPlacementAndItsRefusals) {
  Result r = run("topo hypercube --peers 8 --coding mds --coding-stragglers 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("coding: mds, any 2 member(s) of a block of 3 cover it, each "
                                  "sending 1/2 of a gradient"));
  EXPECT_THAT(r.output, HasSubstr("peer 0: blocks {0} {1 2 4}"));
  r = run("topo hypercube --peers 8 --coding mds --dynamic-roles");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("--dynamic-roles needs --coding frc"));
  r = run("topo hypercube --peers 8 --coding frc --coding-sub-blocks 3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output,
              HasSubstr("--coding-sub-blocks applies to --coding mds or cyclic_mds only"));
}

// The cyclic codes: each peer's neighbours are one block, each holding a window of it; peer 0
// of the torus holds the next neighbour after it in each of its neighbours' blocks.
TEST(TopoCli, CyclicPlacementAndItsRefusals) {
  Result r = run("topo torus --peers 16 --coding crc --coding-stragglers 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("coding: crc, a peer's neighbours form one cyclic block, each "
                                  "holding 2 of its partitions; all but any 1 of them cover it"));
  EXPECT_THAT(r.output, HasSubstr("peer 0: blocks {0} {1 3 4 12}  stores {0 2 5 8}"));
  r = run("topo ring --peers 8 --coding cyclic_mds --coding-stragglers 1 --coding-sub-blocks 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("peer 0 has 2 neighbours"));
  r = run("topo torus --peers 16 --coding crc --coding-sub-blocks 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output,
              HasSubstr("--coding-sub-blocks applies to --coding mds or cyclic_mds only"));
}

TEST(TopoCli, BadInputFailsWithAClearMessage) {
  Result r = run("topo rign");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("unknown topology kind 'rign'"));
  r = run("topo random_regular --peers 7 --degree 3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("peers * degree to be even"));
  auto dir = temp_dir();
  std::ofstream(dir / "bad.txt") << "0 1\n1 two\n";
  r = run("topo edge_list --file " + (dir / "bad.txt").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("bad.txt:2: expected two peer ids"));
  EXPECT_NE(run("topo --peers").exit_code, 0);
}

}  // namespace
