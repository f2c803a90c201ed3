#include "topology/directed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"
#include "topology/facts.h"
#include "topology/topology.h"

namespace fastk::topology {
namespace {

using testing::HasSubstr;

// 0 -> 1 -> 2 -> 3 -> 0 and 0 -> 2: peer 0 splits its mass in three, the others in two.
DirectedSchedule example() { return DirectedSchedule(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}}); }

TEST(DirectedSchedule, SendersSplitTheirMassSoColumnsSumToOne) {
  const DirectedSchedule s = example();
  const Eigen::MatrixXd w = dense(s.matrix(0));
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(w.col(j).sum(), 1.0, 1e-12) << "column " << j;
  EXPECT_NEAR(w.row(2).sum(), 1.0 / 3 + 1.0 / 2 + 1.0 / 2, 1e-12);  // rows need not sum to 1
  const RoundPeers r = s.round(2, 0);
  EXPECT_EQ(r.receive_from, (std::vector<PeerId>{0, 1}));
  EXPECT_EQ(r.receive_weights, (std::vector<double>{1.0 / 3, 1.0 / 2}));
  EXPECT_EQ(r.send_to, (std::vector<PeerId>{3}));
  EXPECT_DOUBLE_EQ(r.self_weight, 0.5);
}

TEST(DirectedSchedule, RefusesWhatIsNotAStronglyConnectedDirectedGraph) {
  auto message = [](int peers, std::vector<Edge> arcs) {
    try {
      DirectedSchedule(peers, std::move(arcs));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message(3, {{0, 1}, {1, 2}}), HasSubstr("not strongly connected: peer(s) 1, 2"));
  EXPECT_THAT(message(2, {{0, 1}, {0, 1}, {1, 0}}), HasSubstr("arc 0 -> 1 is listed twice"));
  EXPECT_THAT(message(2, {{0, 0}}), HasSubstr("self loop"));
  EXPECT_THAT(message(2, {{0, 2}}), HasSubstr("outside 0..1"));
  EXPECT_EQ(message(2, {{0, 1}, {1, 0}}), "accepted");
}

// From a config's edge list: arcs read as written, the column check, the facts.
TEST(DirectedSchedule, AnEdgeListReadAsArcsIsCheckedForColumnsNotRows) {
  const auto dir = testutil::fresh_test_dir("fastk_directed");
  std::ofstream(dir / "arcs.txt") << "0 1\n1 2\n2 3\n3 0\n0 2\n";
  TopologySpec spec;
  spec.kind = TopologyKind::kEdgeList;
  spec.file = (dir / "arcs.txt").string();
  spec.peers = 0;
  spec.directed = true;
  const Topology t = build_topology(spec);
  EXPECT_TRUE(t.directed());
  EXPECT_EQ(t.graph.num_edges(), 5);
  const TopologyFacts f = analyze(t);
  EXPECT_EQ(f.arcs, 5);
  EXPECT_TRUE(f.mixing.usable()) << (f.mixing.errors.empty() ? "" : f.mixing.errors[0]);
  EXPECT_TRUE(f.mixing.column_stochastic);
  EXPECT_FALSE(f.mixing.row_stochastic);
  EXPECT_LT(f.spectrum.lambda, 1.0);
  // Read undirected, the same file is a plain graph with Metropolis-Hastings weights.
  spec.directed = false;
  EXPECT_TRUE(analyze(build_topology(spec)).mixing.row_stochastic);
  std::ofstream(dir / "cut.txt") << "0 1\n1 2\n";
  spec.directed = true;
  spec.file = (dir / "cut.txt").string();
  EXPECT_THROW(build_topology(spec), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::topology
