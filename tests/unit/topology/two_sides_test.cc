#include "topology/two_sides.h"

#include <gtest/gtest.h>

#include "topology/families.h"

namespace fastk::topology {
namespace {

// Every edge joins the two sides, and peer 0 is active.
void expect_valid_sides(const Graph& g, const std::string& what) {
  const TwoSides sides = two_sides(g);
  ASSERT_FALSE(sides.conflict) << what;
  ASSERT_EQ(static_cast<int>(sides.active.size()), g.size()) << what;
  EXPECT_TRUE(sides.active[0]) << what;
  for (const Edge& e : g.edges()) {
    EXPECT_NE(sides.active[static_cast<std::size_t>(e.a)],
              sides.active[static_cast<std::size_t>(e.b)])
        << what << ": " << e.a << "-" << e.b;
  }
}

TEST(TwoSides, SplitsEveryBipartiteFamily) {
  expect_valid_sides(ring(8), "ring 8");
  expect_valid_sides(path(7), "path 7");
  expect_valid_sides(torus(4, 6), "torus 4x6");
  expect_valid_sides(grid(3, 5), "grid 3x5");
  expect_valid_sides(star(9), "star 9");
  expect_valid_sides(hypercube(4), "hypercube 4");
}

TEST(TwoSides, NamesTwoNeighboursOnOneSideOfAnOddCycle) {
  for (const Graph& g : {ring(7), complete(4), torus(3, 4)}) {
    const TwoSides sides = two_sides(g);
    ASSERT_TRUE(sides.conflict);
    EXPECT_TRUE(g.has_edge(sides.conflict->a, sides.conflict->b));
    EXPECT_EQ(sides.active[static_cast<std::size_t>(sides.conflict->a)],
              sides.active[static_cast<std::size_t>(sides.conflict->b)]);
  }
}

}  // namespace
}  // namespace fastk::topology
