// Cyclic repetition code (docs/coding.md §3.2; properties 4, 6 and 7).
#include "coding/cyclic_repetition_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "coding/subsets.h"
#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

struct Shape {
  int n, s;
};

TEST(CodingCrcTest, ConstructionIsCyclicAndEverySubsetOfNMinusSDecodes) {
  for (const Shape shape :
       {Shape{3, 1}, Shape{4, 1}, Shape{5, 2}, Shape{6, 2}, Shape{8, 2}, Shape{10, 3}}) {
    SCOPED_TRACE("n=" + std::to_string(shape.n) + " s=" + std::to_string(shape.s));
    const CyclicRepetitionCode code(shape.n, shape.s);
    const Eigen::MatrixXd& b = code.encoding();
    const Eigen::MatrixXd& h = code.parity();
    ASSERT_EQ(h.rows(), shape.s);
    EXPECT_LT((h * Eigen::VectorXd::Ones(shape.n)).cwiseAbs().maxCoeff(), 1e-10);
    for (int i = 0; i < shape.n; ++i) {
      std::vector<int> window;
      for (int t = 0; t <= shape.s; ++t) window.push_back((i + t) % shape.n);
      std::sort(window.begin(), window.end());
      EXPECT_EQ(code.support(i), window) << "row " << i;
      EXPECT_EQ(b(i, i), 1.0);
      EXPECT_LT((h * b.row(i).transpose()).cwiseAbs().maxCoeff(), 1e-10) << "row " << i;
    }
    std::uint64_t subsets = 0;
    for_each_subset(shape.n, shape.n - shape.s, [&](std::span<const int> s) {
      ++subsets;
      const Decoding d = code.decode(s);
      EXPECT_TRUE(d.decodable);
      EXPECT_LT(d.residual, 1e-8);
    });
    EXPECT_EQ(subsets, binomial(shape.n, shape.s));
  }
}

TEST(CodingCrcTest, SupersetsDecodeAndSmallSetsNeverClaimAWrongSum) {
  const CyclicRepetitionCode code(6, 2);
  for (int size = 0; size <= 6; ++size) {
    for_each_subset(6, size, [&](std::span<const int> s) {
      const Decoding d = code.decode(s);
      if (size >= 4) {
        EXPECT_TRUE(d.decodable) << "size " << size;
      }
      // Whatever the decoder claims, check the combination against the all-ones vector here.
      const Eigen::MatrixXd rows = select_rows(code.encoding(), s);
      Eigen::VectorXd alpha = Eigen::VectorXd::Zero(6);
      for (std::size_t r = 0; r < s.size(); ++r) {
        alpha += d.coefficients[r] * rows.row(Eigen::Index(r)).transpose();
      }
      const double residual = (alpha - Eigen::VectorXd::Ones(6)).cwiseAbs().maxCoeff();
      EXPECT_EQ(d.decodable, residual < 1e-8) << "size " << size << " residual " << residual;
    });
  }
}

TEST(CodingCrcTest, BestOfTwentySeedsIsWellConditionedAndAccurateInFloat) {
  for (const Shape shape :
       {Shape{3, 1}, Shape{4, 1}, Shape{5, 1}, Shape{5, 2}, Shape{6, 1}, Shape{6, 2}}) {
    SCOPED_TRACE("n=" + std::to_string(shape.n) + " s=" + std::to_string(shape.s));
    const CyclicRepetitionCode code(shape.n, shape.s, 11, 20);
    const auto partials = testing::random_partials(shape.n, 256, 3);
    double worst_condition = 0;
    double worst_error = 0;
    for_each_subset(shape.n, shape.n - shape.s, [&](std::span<const int> s) {
      worst_condition =
          std::max(worst_condition, condition_number(select_rows(code.encoding(), s)));
      worst_error = std::max(worst_error, testing::end_to_end_relative_error(code, s, partials));
    });
    EXPECT_LT(worst_condition, 1e4);
    EXPECT_LT(worst_error, 1e-4);
    EXPECT_NEAR(code.worst_condition(), worst_condition, 1e-9 * worst_condition);
  }
}

TEST(CodingCrcTest, KeepsTheBestCandidateAndItsSeedRebuildsIt) {
  const CyclicRepetitionCode best(6, 2, 100, 10);
  for (std::uint64_t seed = 100; seed < 110; ++seed) {
    EXPECT_LE(best.worst_condition(), CyclicRepetitionCode(6, 2, seed, 1).worst_condition());
  }
  const CyclicRepetitionCode rebuilt(6, 2, best.chosen_seed(), 1);
  EXPECT_EQ(rebuilt.encoding(), best.encoding());
}

TEST(CodingCrcTest, NoStragglersIsTheIdentity) {
  const CyclicRepetitionCode code(4, 0);
  EXPECT_EQ(code.encoding(), Eigen::MatrixXd::Identity(4, 4));
}

TEST(CodingCrcTest, BadShapesAreRejected) {
  EXPECT_THROW(CyclicRepetitionCode(4, 4), std::invalid_argument);
  EXPECT_THROW(CyclicRepetitionCode(0, 0), std::invalid_argument);
  EXPECT_THROW(CyclicRepetitionCode(4, 1, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::coding
