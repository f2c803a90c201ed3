#include "consensus/gradient_stats.h"

#include <gtest/gtest.h>

namespace fastk::consensus {
namespace {

TEST(MicroBatchAccumulator, MeanVarianceAndNormOfHandComputedGradients) {
  MicroBatchAccumulator acc(2);
  acc.add(std::vector<float>{1, 0});
  acc.add(std::vector<float>{3, 0});
  std::vector<float> mean(2);
  const GradientStats s = acc.finish(mean);
  EXPECT_EQ(mean, (std::vector<float>{2, 0}));
  ASSERT_TRUE(s.valid);
  // sum ||g - mean||^2 = 2; S = 2 / (2 * 1) = 1; G = 4 - 1 = 3.
  EXPECT_DOUBLE_EQ(s.variance, 1.0);
  EXPECT_DOUBLE_EQ(s.squared_norm, 3.0);
}

TEST(MicroBatchAccumulator, OneMicroBatchGivesNoEstimateAndWrongSizesThrow) {
  MicroBatchAccumulator acc(2);
  acc.add(std::vector<float>{1, 1});
  std::vector<float> mean(2);
  EXPECT_FALSE(acc.finish(mean).valid);
  EXPECT_EQ(mean, (std::vector<float>{1, 1}));
  EXPECT_THROW(acc.add(std::vector<float>{1}), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::consensus
