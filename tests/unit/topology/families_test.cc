#include "topology/families.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/golden.h"
#include "topology/topology.h"

namespace fastk::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename Fn>
std::string error_of(Fn&& build) {
  try {
    build();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool is_regular(const Graph& g, int degree) {
  for (int i = 0; i < g.size(); ++i)
    if (g.degree(i) != degree) return false;
  return true;
}

TEST(Families, RingAndItsSmallCases) {
  EXPECT_EQ(ring(8).num_edges(), 8);
  EXPECT_TRUE(is_regular(ring(8), 2));
  EXPECT_EQ(ring(8).diameter(), 4);
  EXPECT_EQ(ring(2).num_edges(), 1);  // i+1 and i-1 coincide
  EXPECT_EQ(ring(1).num_edges(), 0);
}

TEST(Families, PathGridTorus) {
  EXPECT_EQ(path(6).num_edges(), 5);
  EXPECT_EQ(path(6).diameter(), 5);
  Graph g = grid(3, 4);
  EXPECT_EQ(g.num_edges(), 3 * 3 + 2 * 4);
  EXPECT_EQ(g.diameter(), 2 + 3);
  Graph t = torus(4, 4);
  EXPECT_EQ(t.num_edges(), 32);
  EXPECT_TRUE(is_regular(t, 4));
  EXPECT_EQ(t.diameter(), 4);
  EXPECT_TRUE(t.has_edge(0, 3));            // row wrap-around
  EXPECT_TRUE(t.has_edge(0, 12));           // column wrap-around
  EXPECT_TRUE(is_regular(torus(2, 5), 3));  // 2 rows: up and down are the same neighbour
}

TEST(Families, CompleteStarHypercube) {
  EXPECT_EQ(complete(6).num_edges(), 15);
  EXPECT_EQ(complete(6).diameter(), 1);
  Graph s = star(5);
  EXPECT_EQ(s.degree(0), 4);
  EXPECT_EQ(s.degree(3), 1);
  Graph h = hypercube(4);
  EXPECT_EQ(h.size(), 16);
  EXPECT_TRUE(is_regular(h, 4));
  EXPECT_EQ(h.diameter(), 4);
  EXPECT_TRUE(h.has_edge(5, 5 ^ 8));
}

TEST(Families, ExponentialLinksPowersOfTwo) {
  Graph e = exponential(8);  // hops 1, 2, 4 both ways; +4 and -4 coincide
  EXPECT_TRUE(is_regular(e, 5));
  EXPECT_THAT(e.neighbors(0), ElementsAre(1, 2, 4, 6, 7));
  Graph e12 = exponential(12);  // hops 1, 2, 4, 8 (= -4)
  EXPECT_THAT(e12.neighbors(0), ElementsAre(1, 2, 4, 8, 10, 11));
}

TEST(Families, RandomRegularIsRegularConnectedAndReproducible) {
  Graph a = random_regular(30, 4, 11);
  Graph b = random_regular(30, 4, 11);
  EXPECT_TRUE(is_regular(a, 4));
  EXPECT_EQ(a.edges(), b.edges());
  EXPECT_NE(a.edges(), random_regular(30, 4, 12).edges());
}

TEST(Families, ImpossibleRandomRegularGivesClearErrors) {
  EXPECT_THAT(error_of([] { random_regular(7, 3, 1); }), HasSubstr("peers * degree to be even"));
  EXPECT_THAT(error_of([] { random_regular(5, 5, 1); }), HasSubstr("degree < peers"));
  EXPECT_THAT(error_of([] { random_regular(6, 1, 1); }), HasSubstr("never connected"));
}

TEST(Families, ErdosRenyiDisconnectedIsAClearError) {
  std::string e = error_of([] { erdos_renyi(50, 0.01, 3); });
  EXPECT_THAT(e, HasSubstr("disconnected"));
  EXPECT_THAT(e, HasSubstr("seed 3"));
  EXPECT_THAT(error_of([] { erdos_renyi(10, 1.5, 3); }), HasSubstr("probability"));
  EXPECT_EQ(erdos_renyi(10, 1.0, 3).num_edges(), 45);
}

TEST(Families, WattsStrogatzWithoutRewiringIsTheRingLattice) {
  Graph w = watts_strogatz(12, 4, 0.0, 5);
  EXPECT_TRUE(is_regular(w, 4));
  EXPECT_THAT(w.neighbors(0), ElementsAre(1, 2, 10, 11));
  Graph r = watts_strogatz(40, 4, 0.5, 5);
  EXPECT_EQ(r.num_edges(), 80);  // rewiring moves edges, never adds or drops them
  EXPECT_THAT(error_of([] { watts_strogatz(10, 3, 0.1, 1); }), HasSubstr("even"));
}

}  // namespace
}  // namespace fastk::topology

namespace fastk::topology {
namespace {

// Past the limits (graph.h) a build is refused at once, naming the limit: a complete graph of
// 50,000 peers would have 1.25e9 edges.
TEST(TopologySize, MoreThanTheLimitsIsRefusedAtOnce) {
  auto error_of = [](const TopologySpec& spec) {
    try {
      build_topology(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("built");
  };
  TopologySpec complete;
  complete.kind = TopologyKind::kComplete;
  complete.peers = 50000;
  EXPECT_THAT(error_of(complete), HasSubstr("at most 20000000"));
  TopologySpec ring;
  ring.peers = kMaxPeers + 1;
  EXPECT_THAT(error_of(ring), HasSubstr("1000001 peers: at most 1000000"));
  TopologySpec torus;
  torus.kind = TopologyKind::kTorus;
  torus.rows = 100000;
  torus.cols = 100000;  // rows x cols past int: still refused, not wrapped
  EXPECT_THAT(error_of(torus), HasSubstr("at most 1000000"));
}

// 100,000 peers on a random 4-regular graph: built with sparse weights, each row degree + 1
// entries (a dense W was 80 GB).
TEST(TopologySize, AHundredThousandPeersBuildWithSparseWeights) {
  TopologySpec spec;
  spec.kind = TopologyKind::kRandomRegular;
  spec.peers = 100000;
  spec.degree = 4;
  const Topology t = build_topology(spec);
  EXPECT_EQ(t.graph.size(), 100000);
  EXPECT_EQ(t.graph.num_edges(), 200000);
  EXPECT_EQ(t.weights.nonZeros(), 500000);
  const RoundPeers r = t.schedule->round(99999, 0);
  EXPECT_EQ(r.receive_from.size(), 4u);
  EXPECT_DOUBLE_EQ(r.self_weight, 0.2);
}

}  // namespace
}  // namespace fastk::topology

namespace fastk::topology {
namespace {

// Above 2,048 peers erdos_renyi skips over the pairs without an edge (O(n + m)); the edge
// count still follows G(n, p): within five standard deviations of p n (n - 1) / 2.
TEST(ErdosRenyi, LargeGraphsSkipPairsAndKeepTheEdgeDensity) {
  const int n = 5000;
  const double p = 0.004;
  const Graph g = erdos_renyi(n, p, 3);
  const double expected = p * n * (n - 1) / 2;
  EXPECT_NEAR(static_cast<double>(g.num_edges()), expected, 5 * std::sqrt(expected));
  EXPECT_EQ(erdos_renyi(n, p, 3).edges(), g.edges());  // seeded
  EXPECT_NE(erdos_renyi(n, p, 4).edges(), g.edges());
}

}  // namespace
}  // namespace fastk::topology

namespace fastk::topology {
namespace {

// The Fenwick-tree pairing picks the same stubs as the vector it replaced: every seed gives
// the graph it gave before (recorded from e07d406's `fastk topo --json`).
TEST(RandomRegular, EverySeedGivesTheGraphItGaveBefore) {
  const int cases[][3] = {{8, 3, 1},   {16, 4, 1},   {16, 4, 2},   {100, 4, 7},
                          {500, 5, 3}, {1000, 4, 1}, {2048, 6, 3}, {2000, 3, 11}};
  for (const auto& [n, d, seed] : cases) {
    std::string text;
    const Graph g = random_regular(n, d, static_cast<std::uint64_t>(seed));
    for (const Edge& e : g.edges()) {
      text += std::to_string(e.a) + " " + std::to_string(e.b) + "\n";
    }
    testutil::expect_golden("random_regular_edges.txt",
                            "random_regular_" + std::to_string(n) + "_" + std::to_string(d) + "_" +
                                std::to_string(seed),
                            {{"edges", testutil::fingerprint(text)}});
  }
}

}  // namespace
}  // namespace fastk::topology
