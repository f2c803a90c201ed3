#include "topology/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fastk::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(int peers, std::vector<Edge> edges) {
  try {
    Graph g(peers, std::move(edges));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Graph, NormalisesAndSortsEdgesAndNeighbours) {
  Graph g(4, {{3, 0}, {1, 0}, {2, 1}});
  EXPECT_EQ(g.num_edges(), 3);
  EXPECT_EQ(g.edges()[0], (Edge{0, 1}));
  EXPECT_EQ(g.edges()[1], (Edge{0, 3}));
  EXPECT_THAT(g.neighbors(0), ElementsAre(1, 3));
  EXPECT_TRUE(g.has_edge(3, 0));
  EXPECT_FALSE(g.has_edge(2, 3));
  EXPECT_FALSE(g.has_edge(9, 0));
}

TEST(Graph, RejectsBadInputWithAMessageNamingTheProblem) {
  EXPECT_THAT(error_of(0, {}), HasSubstr("at least 1 peer"));
  EXPECT_THAT(error_of(3, {{0, 1}, {1, 1}}), HasSubstr("self loop at peer 1"));
  EXPECT_THAT(error_of(3, {{0, 1}, {1, 3}}), HasSubstr("edge 1-3 names a peer outside 0..2"));
  EXPECT_THAT(error_of(3, {{0, 1}, {1, 2}, {2, 1}}), HasSubstr("duplicate edge 1-2"));
  EXPECT_THAT(error_of(4, {{0, 1}, {2, 3}}), HasSubstr("disconnected: 2 components; peers {2, 3}"));
  EXPECT_THAT(error_of(2, {}), HasSubstr("disconnected"));
}

TEST(Graph, SinglePeerIsValid) {
  Graph g(1, {});
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.diameter(), 0);
}

TEST(Graph, DistancesAndDiameter) {
  Graph path5(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  EXPECT_THAT(path5.distances_from(1), ElementsAre(1, 0, 1, 2, 3));
  EXPECT_EQ(path5.diameter(), 4);
  EXPECT_EQ(path5.min_degree(), 1);
  EXPECT_EQ(path5.max_degree(), 2);
}

TEST(ConnectedComponents, GroupsPeersAndPutsPeerZeroFirst) {
  std::vector<Edge> edges{{3, 4}, {0, 2}};
  auto c = connected_components(5, edges);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_THAT(c[0], ElementsAre(0, 2));
  EXPECT_THAT(c[1], ElementsAre(1));
  EXPECT_THAT(c[2], ElementsAre(3, 4));
}

}  // namespace
}  // namespace fastk::topology
