// Random against adversarial stragglers (docs/coding.md §5.8): the shape of
// docs/reproduction.md's approximate_adversarial table. A block design's error is the same for
// every straggler set of one size; FRC's, a graph code's, a Bernoulli code's and a stochastic
// block code's are not.
#include "coding/straggler_errors.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "coding/bernoulli_code.h"
#include "coding/block_design_code.h"
#include "coding/fractional_repetition_code.h"
#include "coding/graph_code.h"
#include "coding/stochastic_block_code.h"

namespace fastk::coding {
namespace {

TEST(CodingStragglerErrorsTest, ABlockDesignGivesAnAdversaryNothing) {
  const BlockDesignCode plane = BlockDesignCode::from_difference_set(13, {0, 1, 3, 9});
  ASSERT_EQ(plane.members(), 13);
  ASSERT_EQ(plane.block_size(), 4);
  ASSERT_EQ(plane.pair_multiplicity(), 1);
  for (int s = 1; s <= 6; ++s) {
    const StragglerErrors e = straggler_errors(plane, s);
    const double arrived = 13 - s;
    // err(S) = v - w^2 |S| / (w - lambda + lambda |S|), docs/coding.md §5.3, over k = v.
    const double closed_form = (13.0 - 16.0 * arrived / (3.0 + arrived)) / 13.0;
    EXPECT_NEAR(e.mean_error, closed_form, 1e-12) << s;
    EXPECT_NEAR(e.worst_error, e.mean_error, 1e-12) << s;
    EXPECT_GT(e.worst_error, 0.0) << s;
  }
}

TEST(CodingStragglerErrorsTest, FrcLosesAWholeGroupToAnAdversary) {
  const FractionalRepetitionCode frc(12, 3);  // three groups of four
  const StragglerErrors e = straggler_errors(frc, 4);
  EXPECT_EQ(e.sets, 495u);
  // Random: a group is lost only when all four of its members straggle, 3 of C(12, 4) sets.
  EXPECT_NEAR(e.mean_error, 3.0 / 495.0 * (4.0 / 12.0), 1e-12);
  EXPECT_NEAR(e.worst_error, 4.0 / 12.0, 1e-12);
  EXPECT_EQ(e.worst_stragglers, (std::vector<int>{0, 1, 2, 3}));
}

TEST(CodingStragglerErrorsTest, AGraphCodeLosesTheVertexAnAdversaryIsolates) {
  std::vector<std::pair<int, int>> cycle;
  for (int v = 0; v < 13; ++v) cycle.emplace_back(v, (v + 1) % 13);
  const GraphCode code(13, cycle);
  const StragglerErrors e = straggler_errors(code, 2);
  // Two adjacent edges missing isolate their shared vertex (lost); the other 12 vertices form
  // a path with equal sides, decoded exactly.
  EXPECT_NEAR(e.worst_error, 1.0 / 13.0, 1e-9);
  EXPECT_LT(e.mean_error, 0.5 * e.worst_error);
}

TEST(CodingStragglerErrorsTest, ABernoulliCodesWorstSetIsWorseThanItsAverage) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const BernoulliCode code(13, 13, 4.0, seed);
    const StragglerErrors e = straggler_errors(code, 5);
    EXPECT_GT(e.worst_error, 1.5 * e.mean_error) << "seed " << seed;
  }
}

// A stochastic block code (3 communities of 5, 4 and 4, p_in = 0.8, p_out = 0.05): random
// stragglers cost it little, since most partitions are held across a community, but an
// adversary who silences one community takes its partitions with it. Measured at s = 4
// (mean / worst): 0.024 / 0.182, 0.0078 / 0.259, 0.030 / 0.231 for seeds 1-3, the worst set
// being the community {5, 6, 7, 8} each time.
TEST(CodingStragglerErrorsTest, AStochasticBlockCodeLosesACommunityToAnAdversary) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const StochasticBlockCode code(13, 13, 3, 0.8, 0.05, seed);
    const StragglerErrors e = straggler_errors(code, 4);
    EXPECT_GT(e.worst_error, 5 * e.mean_error) << code.name();
    EXPECT_EQ(e.worst_stragglers, (std::vector<int>{5, 6, 7, 8})) << code.name();
  }
}

TEST(CodingStragglerErrorsTest, RefusesWhatItCannotEnumerate) {
  const FractionalRepetitionCode frc(12, 3);
  EXPECT_THROW(straggler_errors(frc, 12), std::invalid_argument);
  EXPECT_THROW(straggler_errors(frc, -1), std::invalid_argument);
  try {
    straggler_errors(frc, 6, 100);
    FAIL() << "C(12, 6) = 924 sets enumerated with a limit of 100";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "C(12, 6) = 924 straggler sets: at most 100 are enumerated");
  }
  EXPECT_EQ(straggler_errors(frc, 0).worst_error, 0.0);
}

TEST(CodingStragglerErrorsTest, ADifferenceSetThatIsNotOneIsRefused) {
  EXPECT_THROW(BlockDesignCode::from_difference_set(7, {0, 1, 2}), std::invalid_argument);
  EXPECT_THROW(BlockDesignCode::from_difference_set(7, {0, 7}), std::invalid_argument);
  EXPECT_EQ(BlockDesignCode::from_difference_set(21, {0, 1, 4, 14, 16}).pair_multiplicity(), 1);
}

}  // namespace
}  // namespace fastk::coding
