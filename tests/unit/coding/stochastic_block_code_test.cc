// Stochastic block code (docs/coding.md §5.9): the assignment follows its communities, one
// seed gives one matrix, the optimal decoder is exact when every member arrived and the code
// covers every partition, and bad shapes are refused.
#include "coding/stochastic_block_code.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace fastk::coding {
namespace {

// 300 x 300 with 3 communities: 30,000 in-community and 60,000 cross pairs, so the observed
// frequencies are within about 4 standard errors of p_in = 0.2 (0.0023 each) and p_out = 0.02
// (0.00057 each): 0.01 and 0.0025 (this seed: 0.1976 and 0.0200).
TEST(CodingStochasticBlockTest, AssignmentFollowsTheCommunities) {
  const StochasticBlockCode code(300, 300, 3, 0.2, 0.02, 7);
  double inside = 0, across = 0, inside_pairs = 0, across_pairs = 0;
  for (int i = 0; i < 300; ++i) {
    for (int j = 0; j < 300; ++j) {
      const bool same =
          StochasticBlockCode::community(i, 300, 3) == StochasticBlockCode::community(j, 300, 3);
      (same ? inside : across) += code.encoding()(i, j);
      (same ? inside_pairs : across_pairs) += 1;
    }
  }
  EXPECT_EQ(inside_pairs, 30000);
  EXPECT_NEAR(inside / inside_pairs, 0.2, 0.01);
  EXPECT_NEAR(across / across_pairs, 0.02, 0.0025);
  EXPECT_TRUE(code.approximate());
  EXPECT_EQ(code.stragglers_tolerated(), 0);
}

TEST(CodingStochasticBlockTest, CommunitiesAreContiguousRunsOfNearEqualSize) {
  std::vector<int> sizes(3, 0);
  int last = 0;
  for (int i = 0; i < 13; ++i) {
    const int c = StochasticBlockCode::community(i, 13, 3);
    EXPECT_GE(c, last);
    last = c;
    ++sizes[static_cast<std::size_t>(c)];
  }
  EXPECT_EQ(sizes, (std::vector<int>{5, 4, 4}));
}

TEST(CodingStochasticBlockTest, OneSeedOneMatrixAndAFullArrivalDecodes) {
  const StochasticBlockCode a(13, 13, 3, 0.8, 0.05, 3);
  const StochasticBlockCode b(13, 13, 3, 0.8, 0.05, 3);
  const StochasticBlockCode other(13, 13, 3, 0.8, 0.05, 4);
  EXPECT_EQ(a.encoding(), b.encoding());
  EXPECT_NE(a.encoding(), other.encoding());
  // p_in = 1, p_out = 0: each community holds exactly its own partitions (FRC with unequal
  // groups), so the full arrival decodes exactly (a_i = 1 / community size).
  const StochasticBlockCode full(13, 13, 3, 1.0, 0.0, 3);
  std::vector<int> everyone(13);
  for (int i = 0; i < 13; ++i) everyone[static_cast<std::size_t>(i)] = i;
  const Decoding d = full.decode(everyone);
  EXPECT_TRUE(d.decodable);
  EXPECT_LT(d.error, 1e-9);
}

TEST(CodingStochasticBlockTest, BadShapesAreRefused) {
  EXPECT_THROW(StochasticBlockCode(4, 4, 0, 0.5, 0.1, 1), std::invalid_argument);
  EXPECT_THROW(StochasticBlockCode(4, 4, 5, 0.5, 0.1, 1), std::invalid_argument);
  EXPECT_THROW(StochasticBlockCode(4, 4, 2, 0.0, 0.1, 1), std::invalid_argument);
  EXPECT_THROW(StochasticBlockCode(4, 4, 2, 0.5, 1.5, 1), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::coding
