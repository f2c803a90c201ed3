// Fractional repetition code (docs/coding.md §3.1; properties 1, 2, 3 and 12).
#include "coding/fractional_repetition_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "coding/subsets.h"
#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

TEST(CodingFrcTest, EncodingIsBlockDiagonalAllOnes) {
  const FractionalRepetitionCode code(6, 2);
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(6, 6);
  expected.topLeftCorner(3, 3).setOnes();
  expected.bottomRightCorner(3, 3).setOnes();
  EXPECT_EQ(code.encoding(), expected);
  EXPECT_EQ(code.support(4), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(code.computation_load(), 3);
  EXPECT_EQ(code.stragglers_tolerated(), 2);
  EXPECT_FALSE(code.approximate());
}

TEST(CodingFrcTest, EveryFourSubsetOfSixDecodesWithOneFirstResponderPerGroup) {
  const FractionalRepetitionCode code(6, 2);
  const auto partials = testing::random_partials(6, 64, 7);
  int subsets = 0;
  for_each_subset(6, 4, [&](std::span<const int> s) {
    ++subsets;
    // Latest member first, so the first responder is not always the lowest id.
    const std::vector<int> arrived(s.rbegin(), s.rend());
    const Decoding d = code.decode(arrived);
    ASSERT_TRUE(d.decodable);
    EXPECT_LT(d.residual, 1e-12);
    EXPECT_DOUBLE_EQ(d.amplification, 1.0);
    std::vector<int> ones_per_group(2, 0);
    for (std::size_t r = 0; r < arrived.size(); ++r) {
      ASSERT_TRUE(d.coefficients[r] == 0.0 || d.coefficients[r] == 1.0);
      if (d.coefficients[r] == 1.0) ++ones_per_group[code.group_of(arrived[r])];
    }
    EXPECT_EQ(ones_per_group, (std::vector<int>{1, 1}));
    EXPECT_LT(testing::end_to_end_relative_error(code, arrived, partials), 1e-6);
  });
  EXPECT_EQ(subsets, 15);
}

TEST(CodingFrcTest, StopsAsSoonAsEveryGroupIsCovered) {
  const FractionalRepetitionCode code(6, 2);
  const std::vector<int> two = {4, 1};
  EXPECT_TRUE(code.decode(two).decodable);
  const std::vector<int> late_duplicate = {3, 4, 0};
  EXPECT_EQ(code.covered_groups(late_duplicate), 2);
  EXPECT_EQ(code.decode(late_duplicate).coefficients, (std::vector<double>{1, 0, 1}));
}

TEST(CodingFrcTest, AnySubsetDecodesIffItCoversEveryGroupAndMissedGroupsCostTheirSize) {
  // n = 6, s = 1: three groups of two; every subset of every size.
  const FractionalRepetitionCode code(6, 1);
  for (int size = 0; size <= 6; ++size) {
    for_each_subset(6, size, [&](std::span<const int> s) {
      std::vector<bool> covered(3, false);
      for (int m : s) covered[m / 2] = true;
      const int missed = int(std::count(covered.begin(), covered.end(), false));
      const Decoding first = code.decode(s);
      const Decoding least_squares = decode_least_squares(select_rows(code.encoding(), s));
      EXPECT_EQ(first.decodable, missed == 0);
      EXPECT_EQ(least_squares.decodable, missed == 0);
      EXPECT_NEAR(first.error, missed * 2.0, 1e-12);  // t * (s + 1)
      EXPECT_NEAR(least_squares.error, missed * 2.0, 1e-9);
      EXPECT_EQ(code.covered_groups(s), 3 - missed);
    });
  }
}

TEST(CodingFrcTest, RejectsGroupSizesThatDoNotDivideN) {
  testing::expect_invalid_argument([] { FractionalRepetitionCode(7, 2); },
                                   "s+1 = 3 to divide n = 7");
  EXPECT_THROW(FractionalRepetitionCode(6, 6), std::invalid_argument);
  EXPECT_THROW(FractionalRepetitionCode(6, -1), std::invalid_argument);
}

TEST(CodingFrcTest, RandomStragglersErrorMatchesTheClosedForm) {
  // n = 12, d = 3 (s = 2 groups of 3), 4 uniformly random stragglers: E[err(S)]/k is
  // C(n-d, s-d)/C(n, s) = C(9, 1)/C(12, 4) = 9/495. Averaging over all 495 patterns is exact.
  const FractionalRepetitionCode code(12, 2);
  double total = 0;
  int patterns = 0;
  for_each_subset(12, 8, [&](std::span<const int> arrived) {
    total += code.decode(arrived).error / 12.0;
    ++patterns;
  });
  ASSERT_EQ(patterns, 495);
  EXPECT_NEAR(total / patterns, 9.0 / 495.0, 1e-12);
  EXPECT_NEAR(total / patterns, 0.0182, 0.0001);
}

TEST(CodingFrcTest, UnevenGroupsForANeighbourhood) {
  // A ring neighbourhood (docs/coding.md §7.4): the peer alone, its two neighbours as a pair.
  const auto code = FractionalRepetitionCode::from_groups({{0}, {1, 2}});
  EXPECT_EQ(code.stragglers_tolerated(), 0);
  EXPECT_EQ(code.support(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(code.support(0), (std::vector<int>{0}));
  const std::vector<int> peer_and_one = {0, 2};
  EXPECT_TRUE(code.decode(peer_and_one).decodable);
  const std::vector<int> pair_only = {1, 2};
  const Decoding d = code.decode(pair_only);
  EXPECT_FALSE(d.decodable);
  EXPECT_DOUBLE_EQ(d.error, 1.0);
}

TEST(CodingFrcTest, BadGroupsAndArrivalsAreNamed) {
  EXPECT_THROW(FractionalRepetitionCode::from_groups({{0, 1}, {1}}), std::invalid_argument);
  EXPECT_THROW(FractionalRepetitionCode::from_groups({{0, 3}, {1}}), std::invalid_argument);
  EXPECT_THROW(FractionalRepetitionCode::from_groups({{0}, {}}), std::invalid_argument);
  const FractionalRepetitionCode code(4, 1);
  const std::vector<int> twice = {0, 0};
  EXPECT_THROW(code.decode(twice), std::invalid_argument);
  const std::vector<int> outside = {4};
  testing::expect_invalid_argument([&] { code.decode(outside); },
                                   "arrived member 4 is outside [0, 4)");
}

}  // namespace
}  // namespace fastk::coding
