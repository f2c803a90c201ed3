// Nested FRC and its level switch (coding/nested_code.h; docs/coding.md §5.9): the low level
// computes inside what the high level stores, each level tolerates its own stragglers, the
// switch goes up at once and down after its patience, and under persistent Markov stragglers
// switching decodes more steps than staying low while computing less than staying high.
#include "coding/nested_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/subsets.h"

namespace fastk::coding {
namespace {

std::vector<int> all_but(int n, std::span<const int> late) {
  std::vector<int> arrived;
  for (int i = 0; i < n; ++i) {
    if (std::find(late.begin(), late.end(), i) == late.end()) arrived.push_back(i);
  }
  return arrived;
}

TEST(CodingNestedFrcTest, TheLowLevelComputesInsideWhatTheHighLevelStores) {
  const NestedFrc nested(12, 1, 3);
  for (int i = 0; i < 12; ++i) {
    const std::vector<int> stored = nested.stored(i);
    EXPECT_EQ(stored.size(), 4u);
    for (int j : nested.code(NestingLevel::kLow).support(i)) {
      EXPECT_TRUE(std::binary_search(stored.begin(), stored.end(), j)) << i << " computes " << j;
    }
  }
  EXPECT_EQ(nested.code(NestingLevel::kLow).computation_load(), 2);
  EXPECT_EQ(nested.code(NestingLevel::kHigh).computation_load(), 4);
}

TEST(CodingNestedFrcTest, EachLevelToleratesItsOwnStragglers) {
  const NestedFrc nested(12, 1, 3);
  for (NestingLevel level : {NestingLevel::kLow, NestingLevel::kHigh}) {
    const int s = nested.tolerance(level);
    for_each_subset(12, s, [&](std::span<const int> late) {
      EXPECT_TRUE(nested.code(level).decode(all_but(12, late)).decodable) << nested.name();
    });
  }
  // Two late members of one low subgroup: the low level loses it, the high level does not.
  const std::vector<int> pair = {0, 1};
  EXPECT_FALSE(nested.code(NestingLevel::kLow).decode(all_but(12, pair)).decodable);
  EXPECT_TRUE(nested.code(NestingLevel::kHigh).decode(all_but(12, pair)).decodable);
}

TEST(CodingNestedFrcTest, BadShapesAreRefused) {
  EXPECT_THROW(NestedFrc(12, 2, 3), std::invalid_argument);  // 3 does not divide 4
  EXPECT_THROW(NestedFrc(10, 1, 3), std::invalid_argument);  // 4 does not divide 10
  EXPECT_THROW(NestedFrc(12, 3, 3), std::invalid_argument);
  EXPECT_THROW(LevelSwitch(0), std::invalid_argument);
}

TEST(CodingNestedFrcTest, TheSwitchGoesUpAtOnceAndDownAfterItsPatience) {
  const NestedFrc nested(12, 1, 3);
  const std::vector<int> spread = {0, 2, 4}, pair = {0, 1};
  EXPECT_TRUE(nested.survives(NestingLevel::kLow, spread));
  EXPECT_FALSE(nested.survives(NestingLevel::kLow, pair));
  EXPECT_TRUE(nested.survives(NestingLevel::kHigh, pair));
  const std::vector<int> outside = {12};
  EXPECT_THROW(nested.survives(NestingLevel::kLow, outside), std::invalid_argument);
  LevelSwitch levels(3);
  EXPECT_EQ(levels.observe(true), NestingLevel::kLow);
  EXPECT_EQ(levels.observe(false), NestingLevel::kHigh);
  EXPECT_EQ(levels.observe(true), NestingLevel::kHigh);
  EXPECT_EQ(levels.observe(true), NestingLevel::kHigh);
  EXPECT_EQ(levels.observe(false), NestingLevel::kHigh);  // a defeat restarts the count
  EXPECT_EQ(levels.observe(true), NestingLevel::kHigh);
  EXPECT_EQ(levels.observe(true), NestingLevel::kHigh);
  EXPECT_EQ(levels.observe(true), NestingLevel::kLow);
}

struct Outcome {
  double decoded = 0;   // share of iterations whose level decoded exactly
  double computed = 0;  // mean partitions per member and iteration
};

// 12 members with independent two-state Markov stragglers (p_NS = 0.05, p_SN = 0.3, as the
// coding figures use), 20,000 iterations; the level of iteration t is chosen from the late
// members of t - 1 (`patience` 0: a fixed level, `fixed`). Measured with libstdc++'s
// bernoulli_distribution (decoded / partitions computed per member): low 0.8775 / 2, high
// 0.9987 / 4, switching with patience 5 0.9555 / 2.66; the margins below hold for any draw.
Outcome run_levels(int patience, NestingLevel fixed) {
  const NestedFrc nested(12, 1, 3);
  std::mt19937_64 rng(11);
  std::bernoulli_distribution enter(0.05), leave(0.3);
  std::vector<bool> slow(12, false);
  LevelSwitch levels(std::max(patience, 1));
  NestingLevel level = patience > 0 ? levels.level() : fixed;
  Outcome out;
  constexpr int kIterations = 20000;
  for (int t = 0; t < kIterations; ++t) {
    std::vector<int> late;
    for (int i = 0; i < 12; ++i) {
      slow[static_cast<std::size_t>(i)] =
          slow[static_cast<std::size_t>(i)] ? !leave(rng) : enter(rng);
      if (slow[static_cast<std::size_t>(i)]) late.push_back(i);
    }
    const bool decoded = nested.code(level).decode(all_but(12, late)).decodable;
    EXPECT_EQ(decoded, nested.survives(level, late));
    out.decoded += decoded ? 1 : 0;
    out.computed += nested.tolerance(level) + 1;
    if (patience > 0) level = levels.observe(nested.survives(NestingLevel::kLow, late));
  }
  out.decoded /= kIterations;
  out.computed /= kIterations;
  return out;
}

TEST(CodingNestedFrcTest, SwitchingDecodesMoreThanLowAndComputesLessThanHigh) {
  const Outcome low = run_levels(0, NestingLevel::kLow);
  const Outcome high = run_levels(0, NestingLevel::kHigh);
  const Outcome switching = run_levels(5, NestingLevel::kLow);
  std::printf("decoded / computed: low %.4f / %.2f, high %.4f / %.2f, switching %.4f / %.2f\n",
              low.decoded, low.computed, high.decoded, high.computed, switching.decoded,
              switching.computed);
  EXPECT_GT(switching.decoded, low.decoded + 0.05);
  EXPECT_LT(switching.computed, high.computed - 0.5);
  EXPECT_GT(high.decoded, switching.decoded);
}

}  // namespace
}  // namespace fastk::coding
