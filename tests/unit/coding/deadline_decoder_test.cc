// ErasureHead-style deadline decoding over FRC (docs/coding.md §5.5 and §7.5).
#include "coding/deadline_decoder.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

TEST(CodingDeadlineDecoderTest, DropsUncoveredGroupsAndOptionallyRescales) {
  const FractionalRepetitionCode code(6, 2);
  const std::vector<int> first_group_only = {1, 2};
  const Decoding dropped = decode_at_deadline(code, first_group_only, false);
  EXPECT_FALSE(dropped.decodable);
  EXPECT_EQ(dropped.coefficients, (std::vector<double>{1, 0}));
  EXPECT_EQ(dropped.alpha, (std::vector<double>{1, 1, 1, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(dropped.error, 3.0);

  const Decoding rescaled = decode_at_deadline(code, first_group_only, true);
  EXPECT_EQ(rescaled.coefficients, (std::vector<double>{2, 0}));
  EXPECT_EQ(rescaled.alpha, (std::vector<double>{2, 2, 2, 0, 0, 0}));

  const std::vector<int> nobody;
  EXPECT_EQ(decode_at_deadline(code, nobody, true).alpha, std::vector<double>(6, 0.0));
  const std::vector<int> both = {5, 0};
  EXPECT_TRUE(decode_at_deadline(code, both, true).decodable);
  EXPECT_EQ(decode_at_deadline(code, both, true).coefficients, (std::vector<double>{1, 1}));
}

TEST(CodingDeadlineDecoderTest, RescalingRemovesTheDownwardBias) {
  // FRC(12, 2): four groups of three; independent stragglers with p = 0.3. Without rescaling
  // E[alpha_j] = 1 - p^3 = 0.973; with it E[alpha_j] = 1 - (p^3)^4, i.e. 1 to 5e-7.
  const FractionalRepetitionCode code(12, 2);
  const std::vector<double> straggle(12, 0.3);
  std::mt19937_64 rng(55);
  testing::MeanEstimate dropped, rescaled;
  for (int t = 0; t < 20000; ++t) {
    const std::vector<int> arrived = testing::draw_arrivals(straggle, rng);
    dropped.add(decode_at_deadline(code, arrived, false).alpha[0]);
    rescaled.add(decode_at_deadline(code, arrived, true).alpha[0]);
  }
  EXPECT_NEAR(dropped.mean(), 1 - 0.027, 3 * dropped.standard_error());
  EXPECT_GT(1.0 - dropped.mean(), 10 * dropped.standard_error());
  EXPECT_NEAR(rescaled.mean(), 1.0, 3 * rescaled.standard_error());
}

TEST(CodingDeadlineDecoderTest, StopsAtCoverageOrAfterCollectingEnough) {
  const FractionalRepetitionCode code(6, 2);
  const std::vector<int> same_group = {0, 1};
  EXPECT_FALSE(erasure_head_can_stop(code, same_group, 3));
  EXPECT_TRUE(erasure_head_can_stop(code, same_group, 2));
  const std::vector<int> covering = {0, 3};
  EXPECT_TRUE(erasure_head_can_stop(code, covering, 6));
}

}  // namespace
}  // namespace fastk::coding
