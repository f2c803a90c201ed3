// Graph (expander) code under optimal decoding (docs/coding.md §5.4; property 15).
#include "coding/graph_code.h"

#include <gtest/gtest.h>

#include <numeric>

#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

std::vector<int> everyone(const GradientCode& code) {
  std::vector<int> all(code.members());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

void expect_alpha(const Decoding& d, const std::vector<double>& expected) {
  ASSERT_EQ(d.alpha.size(), expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) {
    EXPECT_NEAR(d.alpha[j], expected[j], 1e-12) << "block " << j;
  }
}

TEST(CodingGraphCodeTest, OddCycleRecoversEveryBlock) {
  const GraphCode cycle(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}});
  const Decoding d = cycle.decode(everyone(cycle));
  EXPECT_TRUE(d.decodable);
  expect_alpha(d, {1, 1, 1, 1, 1});
}

TEST(CodingGraphCodeTest, PathIsOffByTheImbalanceOfItsSides) {
  // Sides {0, 2, 4} and {1, 3}: 1 -/+ (3 - 2)/5.
  const GraphCode path(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  const Decoding d = path.decode(everyone(path));
  EXPECT_FALSE(d.decodable);
  expect_alpha(d, {0.8, 1.2, 0.8, 1.2, 0.8});
  // The same path is what survives of the 5-cycle when the edge (4, 0) straggles.
  const GraphCode cycle(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}});
  const std::vector<int> survivors = {0, 1, 2, 3};
  expect_alpha(cycle.decode(survivors), {0.8, 1.2, 0.8, 1.2, 0.8});
}

TEST(CodingGraphCodeTest, IsolatedVertexIsLost) {
  const GraphCode triangle_and_one(4, {{0, 1}, {1, 2}, {2, 0}});
  expect_alpha(triangle_and_one.decode(everyone(triangle_and_one)), {1, 1, 1, 0});
}

TEST(CodingGraphCodeTest, BadEdgesAreNamed) {
  testing::expect_invalid_argument(
      [] {
        GraphCode(3, {{0, 1}, {2, 2}});
      },
      "edge 1 (2, 2) needs two distinct endpoints");
  testing::expect_invalid_argument([] { GraphCode(3, {{0, 3}}); }, "in [0, 3)");
}

}  // namespace
}  // namespace fastk::coding
