#include "topology/spanning_tree.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "topology/families.h"

namespace fastk::topology {
namespace {

// A spanning tree: n - 1 edges, each a graph edge listed at both ends, connecting every peer.
void expect_spanning_tree(const Graph& g, const std::string& what) {
  const auto tree = spanning_tree(g);
  ASSERT_EQ(static_cast<int>(tree.size()), g.size()) << what;
  std::vector<Edge> edges;
  for (PeerId i = 0; i < g.size(); ++i) {
    for (PeerId j : tree[static_cast<std::size_t>(i)]) {
      EXPECT_TRUE(g.has_edge(i, j)) << what << ": " << i << "-" << j;
      const auto& back = tree[static_cast<std::size_t>(j)];
      EXPECT_TRUE(std::binary_search(back.begin(), back.end(), i)) << what;
      if (i < j) edges.push_back({i, j});
    }
  }
  EXPECT_EQ(static_cast<int>(edges.size()), g.size() - 1) << what;
  EXPECT_EQ(connected_components(g.size(), edges).size(), 1u) << what;
}

TEST(SpanningTree, SpansEveryRandomGraph) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    expect_spanning_tree(erdos_renyi(30, 0.3, seed), "erdos_renyi seed " + std::to_string(seed));
    expect_spanning_tree(random_regular(20, 3, seed),
                         "random_regular seed " + std::to_string(seed));
    expect_spanning_tree(watts_strogatz(24, 4, 0.3, seed),
                         "watts_strogatz " + std::to_string(seed));
  }
  expect_spanning_tree(Graph(1, {}), "one peer");
}

// Rooted at the highest-degree peer: on a star, the star itself.
TEST(SpanningTree, IsRootedAtTheHighestDegreePeer) {
  const auto tree = spanning_tree(star(5));
  EXPECT_EQ(tree[0], (std::vector<PeerId>{1, 2, 3, 4}));
  // A 4x4 torus is regular: rooted at peer 0, with depth at most the diameter (4).
  const Graph t = torus(4, 4);
  const auto torus_tree = spanning_tree(t);
  EXPECT_EQ(torus_tree[0].size(), 4u);
}

}  // namespace
}  // namespace fastk::topology
