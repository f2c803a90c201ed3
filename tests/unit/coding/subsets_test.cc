// Subset enumeration and conditioning helpers behind seed selection and the exhaustive tests.
#include "coding/subsets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "coding/portable_normal.h"

namespace fastk::coding {
namespace {

TEST(CodingSubsetsTest, BinomialCoefficients) {
  EXPECT_EQ(binomial(10, 3), 120u);
  EXPECT_EQ(binomial(12, 4), 495u);
  EXPECT_EQ(binomial(6, 0), 1u);
  EXPECT_EQ(binomial(5, 7), 0u);
  EXPECT_EQ(binomial(5, -1), 0u);
  EXPECT_EQ(binomial(200, 100), std::numeric_limits<std::uint64_t>::max());
}

TEST(CodingSubsetsTest, EnumeratesInLexicographicOrder) {
  std::vector<std::vector<int>> seen;
  for_each_subset(4, 2, [&](std::span<const int> s) { seen.emplace_back(s.begin(), s.end()); });
  EXPECT_EQ(seen, (std::vector<std::vector<int>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
  int empty = 0;
  for_each_subset(3, 0, [&](std::span<const int> s) { empty += s.empty() ? 1 : 0; });
  EXPECT_EQ(empty, 1);
}

TEST(CodingSubsetsTest, ConditionNumbers) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(2, 3);
  m(0, 0) = 2;
  m(1, 1) = 1e-3;
  EXPECT_NEAR(condition_number(m), 2000.0, 1e-9);
  m(1, 1) = 0;
  EXPECT_TRUE(std::isinf(condition_number(m)));
  // Rows {0, 1} of diag(1, 10, 100) have cond 10, rows {0, 2} 100: the worst is 100.
  const Eigen::MatrixXd d = Eigen::Vector3d(1, 10, 100).asDiagonal();
  EXPECT_NEAR(worst_row_subset_condition(d, 2, 100, 1), 100.0, 1e-9);
}

// Draws are compared on three significant digits: figures a build's round-off moves by a few
// ulps compare equal, ties keep the lower seed, and infinity (a singular draw) stays last.
TEST(CodingSubsetsTest, ThreeSignificantDigits) {
  EXPECT_DOUBLE_EQ(three_significant_digits(1234.5678), 1230.0);
  EXPECT_DOUBLE_EQ(three_significant_digits(0.0012345), 0.00123);
  EXPECT_EQ(three_significant_digits(41.6 * (1 + 1e-15)),
            three_significant_digits(41.6 * (1 - 1e-15)));
  EXPECT_LT(three_significant_digits(41.6), three_significant_digits(41.7));
  EXPECT_EQ(three_significant_digits(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
}

TEST(CodingPortableNormalTest, StandardNormalMomentsAndReproducibility) {
  PortableNormal a(5), b(5);
  double sum = 0, squares = 0;
  const int draws = 100000;
  for (int t = 0; t < draws; ++t) {
    const double x = a();
    ASSERT_EQ(x, b());
    sum += x;
    squares += x * x;
  }
  EXPECT_NEAR(sum / draws, 0.0, 0.015);     // 4.7 standard errors
  EXPECT_NEAR(squares / draws, 1.0, 0.02);  // 4.5 standard errors
  EXPECT_NE(gaussian_matrix(2, 2, 1), gaussian_matrix(2, 2, 2));
}

}  // namespace
}  // namespace fastk::coding
