// Generic least-squares decoder (docs/coding.md §2; properties 5, 6, 23 and 24).
#include "coding/decoding.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

// Tandon et al.'s n = 3, s = 1 example: f1 = g1/2 + g2, f2 = g2 - g3, f3 = g1/2 + g3.
Eigen::MatrixXd tandon_example() {
  Eigen::MatrixXd b(3, 3);
  b << 0.5, 1, 0,  //
      0, 1, -1,    //
      0.5, 0, 1;
  return b;
}

Eigen::MatrixXd rows(const Eigen::MatrixXd& b, std::vector<int> keep) {
  Eigen::MatrixXd out(keep.size(), b.cols());
  for (std::size_t r = 0; r < keep.size(); ++r) out.row(r) = b.row(keep[r]);
  return out;
}

TEST(CodingDecodingTest, TandonGoldenDecodingVectors) {
  const Eigen::MatrixXd b = tandon_example();
  struct Case {
    std::vector<int> subset;
    double a0, a1;
  };
  // Decoding vectors (2, -1), (1, 1), (1, 2) for {1,2}, {1,3}, {2,3} (0-based here).
  for (const Case& c : {Case{{0, 1}, 2, -1}, Case{{0, 2}, 1, 1}, Case{{1, 2}, 1, 2}}) {
    const Decoding d = decode_least_squares(rows(b, c.subset));
    ASSERT_TRUE(d.decodable);
    ASSERT_EQ(d.coefficients.size(), 2u);
    EXPECT_NEAR(d.coefficients[0], c.a0, 1e-12);
    EXPECT_NEAR(d.coefficients[1], c.a1, 1e-12);
    EXPECT_LT(d.residual, 1e-12);
    EXPECT_LT(d.error, 1e-24);
    ASSERT_EQ(d.alpha.size(), 3u);
    for (double alpha : d.alpha) EXPECT_NEAR(alpha, 1.0, 1e-12);
  }
}

TEST(CodingDecodingTest, AmplificationOfTheGoldenExample) {
  // {1,2}: |2| * 1.5 + |-1| * 2 = 5, over k = 3.
  const Decoding d = decode_least_squares(rows(tandon_example(), {0, 1}));
  EXPECT_NEAR(d.amplification, 5.0 / 3.0, 1e-12);
}

TEST(CodingDecodingTest, SingleRowOfTheGoldenExampleIsNotDecodable) {
  // One arrival cannot rebuild g1 + g2 + g3 for this code; the decoder must say so.
  for (int r = 0; r < 3; ++r) {
    const Decoding d = decode_least_squares(rows(tandon_example(), {r}));
    EXPECT_FALSE(d.decodable) << "row " << r;
    EXPECT_GT(d.residual, 0.1);
  }
}

TEST(CodingDecodingTest, SupersetOfADecodableSetDecodes) {
  const Decoding d = decode_least_squares(tandon_example());
  EXPECT_TRUE(d.decodable);
  EXPECT_LT(d.residual, 1e-12);
}

TEST(CodingDecodingTest, EmptyArrivalSetIsNotDecodable) {
  const Decoding d = decode_least_squares(Eigen::MatrixXd(0, 4));
  EXPECT_FALSE(d.decodable);
  EXPECT_TRUE(d.coefficients.empty());
  EXPECT_EQ(d.residual, 1.0);
  EXPECT_EQ(d.error, 4.0);
  EXPECT_EQ(d.alpha, std::vector<double>(4, 0.0));
}

TEST(CodingDecodingTest, RankDeficientRowsGetTheMinimumNormSolution) {
  // Two identical all-ones rows: any a with a1 + a2 = 1 decodes; minimum norm is (1/2, 1/2).
  Eigen::MatrixXd b(2, 3);
  b << 1, 1, 1, 1, 1, 1;
  const Decoding d = decode_least_squares(b);
  ASSERT_TRUE(d.decodable);
  EXPECT_NEAR(d.coefficients[0], 0.5, 1e-12);
  EXPECT_NEAR(d.coefficients[1], 0.5, 1e-12);
  EXPECT_NEAR(d.amplification, 1.0, 1e-12);
}

TEST(CodingDecodingTest, RankIsDecidedByTheDocumentedThreshold) {
  // Partition 2 is held only with weight delta, by a row otherwise equal to row 0. Below the
  // rank threshold the two rows are one: partition 2 is lost (alpha_2 = 0) and the coefficients
  // stay at 1/2, instead of 1/delta = 1e13 "decoding" it by cancellation.
  const auto decode_with_weight = [](double delta) {
    Eigen::MatrixXd b(2, 3);
    b << 1, 1, 0, 1, 1, delta;
    return decode_least_squares(b);
  };
  const Decoding lost = decode_with_weight(kDecodingRankThreshold / 1000);
  EXPECT_FALSE(lost.decodable);
  EXPECT_NEAR(lost.coefficients[0], 0.5, 1e-9);
  EXPECT_NEAR(lost.coefficients[1], 0.5, 1e-9);
  EXPECT_NEAR(lost.alpha[2], 0.0, 1e-9);
  // Well above the threshold the weight is a real, if expensive, way to reach partition 2.
  const Decoding kept = decode_with_weight(1e-6);
  EXPECT_TRUE(kept.decodable);
  EXPECT_NEAR(kept.coefficients[1], 1e6, 1e-3);
  EXPECT_NEAR(kept.coefficients[0], 1 - 1e6, 1e-3);
}

TEST(CodingDecodingTest, MinimumNormSolutionMatchesThePseudoInverse) {
  // Rank-deficient B_S (rank 2 of up to 5 rows, 6 partitions): the decoder's a must be the
  // pseudo-inverse solution, computed here by another algorithm (an SVD).
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> entry(-1.0, 1.0);
  const auto random_matrix = [&](int rows_, int cols) {
    Eigen::MatrixXd m(rows_, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = entry(rng);
    return m;
  };
  for (int members = 3; members <= 5; ++members) {
    const Eigen::MatrixXd b = random_matrix(members, 2) * random_matrix(2, 6);
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(6);
    const Eigen::VectorXd reference =
        b.transpose().jacobiSvd(Eigen::ComputeThinU | Eigen::ComputeThinV).solve(ones);
    const Decoding d = decode_least_squares(b);
    ASSERT_EQ(d.coefficients.size(), std::size_t(members));
    for (int i = 0; i < members; ++i) {
      EXPECT_NEAR(d.coefficients[i], reference(i), 1e-9) << members << " members, row " << i;
    }
  }
}

TEST(CodingDecodingTest, PartialCoverageReportsTheLeastSquaresError) {
  // Rows cover partitions {0,1} and {1,2} of 4; partition 3 is never seen: alpha_3 = 0.
  Eigen::MatrixXd b(2, 4);
  b << 1, 1, 0, 0, 0, 1, 1, 0;
  const Decoding d = decode_least_squares(b);
  EXPECT_FALSE(d.decodable);
  EXPECT_NEAR(d.alpha[3], 0.0, 1e-12);
  EXPECT_NEAR(d.residual, 1.0, 1e-12);
  // Least squares on the first three partitions: a = (2/3, 2/3), alpha = (2/3, 4/3, 2/3).
  EXPECT_NEAR(d.error, 3.0 / 9.0 + 1.0, 1e-12);
}

TEST(CodingDecodingTest, EvaluateDecodingOfFixedWeights) {
  Eigen::MatrixXd b(2, 2);
  b << 1, 0, 1, 1;
  const Decoding d = evaluate_decoding(b, {0.5, 0.5});
  EXPECT_FALSE(d.decodable);
  EXPECT_DOUBLE_EQ(d.alpha[0], 1.0);
  EXPECT_DOUBLE_EQ(d.alpha[1], 0.5);
  EXPECT_DOUBLE_EQ(d.residual, 0.5);
  EXPECT_DOUBLE_EQ(d.error, 0.25);
  EXPECT_DOUBLE_EQ(d.amplification, (0.5 * 1 + 0.5 * 2) / 2.0);
}

TEST(CodingDecodingTest, NonFiniteCoefficientsAreNeverDecodable) {
  Eigen::MatrixXd b(1, 1);
  b << 1;
  EXPECT_FALSE(evaluate_decoding(b, {std::nan("")}).decodable);
}

TEST(CodingDecodingTest, MisuseIsRejectedWithAMessage) {
  EXPECT_THROW(decode_least_squares(Eigen::MatrixXd(2, 0)), std::invalid_argument);
  EXPECT_THROW(decode_least_squares(Eigen::MatrixXd::Ones(2, 2), 0.0), std::invalid_argument);
  testing::expect_invalid_argument([] { evaluate_decoding(Eigen::MatrixXd::Ones(2, 2), {1.0}); },
                                   "1 coefficients for 2 arrived rows");
}

}  // namespace
}  // namespace fastk::coding
