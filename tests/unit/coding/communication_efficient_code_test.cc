// Communication-efficient codes: grouped Gaussian MDS (docs/coding.md §4.2) and cyclic placement
// with a Gaussian generator (§4.3); properties 9, 10 and 11.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>

#include "coding/cyclic_mds_code.h"
#include "coding/grouped_mds_code.h"
#include "coding/subsets.h"
#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

// Worst relative error, over the sub-blocks, of rebuilding sum_j g_j^(u) in double from the
// decoding's alpha: sum_{j,u'} alpha[j m + u'] g_j^(u') against the true sub-sum.
double sub_sum_relative_error(const CommunicationEfficientCode& code,
                              const SubBlockDecoding& decoding, std::uint64_t seed) {
  const int k = code.partitions(), m = code.sub_blocks(), piece = 16;
  std::mt19937_64 rng(seed);
  std::vector<Eigen::VectorXd> sub(std::size_t(k) * m, Eigen::VectorXd(piece));
  for (auto& v : sub) {
    for (int t = 0; t < piece; ++t) v(t) = 2 * testing::uniform(rng) - 1;
  }
  double worst = 0;
  for (int u = 0; u < m; ++u) {
    Eigen::VectorXd rebuilt = Eigen::VectorXd::Zero(piece), truth = Eigen::VectorXd::Zero(piece);
    for (int j = 0; j < k; ++j) {
      truth += sub[j * m + u];
      for (int w = 0; w < m; ++w)
        rebuilt += decoding.sub_blocks[u].alpha[j * m + w] * sub[j * m + w];
    }
    worst = std::max(worst, (rebuilt - truth).norm() / truth.norm());
  }
  return worst;
}

TEST(CodingCyclicMdsTest, TouchesOnlyItsWindowAndEveryEightSubsetRecoversTheSubSums) {
  const CyclicMdsCode code(10, 2, 2, 2026);
  EXPECT_EQ(code.computation_load(), 4);
  for (int i = 0; i < 10; ++i) {
    std::vector<int> window;
    for (int t = 0; t < 4; ++t) window.push_back((i + t) % 10);
    std::sort(window.begin(), window.end());
    EXPECT_EQ(code.support(i), window) << "member " << i;
  }
  EXPECT_LT(code.max_off_support_weight(), 1e-12);

  const auto partials = testing::random_partials(10, 37, 5);  // odd length: padded halves
  int subsets = 0;
  for_each_subset(10, 8, [&](std::span<const int> s) {
    ++subsets;
    const SubBlockDecoding d = code.decode(s);
    ASSERT_TRUE(d.decodable);
    ASSERT_EQ(d.sub_blocks.size(), 2u);
    EXPECT_LT(sub_sum_relative_error(code, d, subsets), 1e-9);

    std::vector<Eigen::VectorXf> messages;
    for (int member : s) messages.push_back(code.encode(member, partials));
    EXPECT_EQ(messages.front().size(), 19);  // ceil(37 / 2)
    const Eigen::VectorXf sum = code.combine(d, messages, 37);
    const Eigen::VectorXd truth = testing::exact_sum(partials);
    EXPECT_LT((sum.cast<double>() - truth).norm() / truth.norm(), 1e-4);
  });
  EXPECT_EQ(subsets, 45);
}

TEST(CodingCyclicMdsTest, TooFewMessagesAreNotDecodable) {
  const CyclicMdsCode code(10, 2, 2, 2026);
  for_each_subset(10, 7, [&](std::span<const int> s) { EXPECT_FALSE(code.decode(s).decodable); });
}

// Worst cond(G[:, S]) over the (n - s)-column subsets of a (n - s) x n generator.
double worst_column_subset_condition(const Eigen::MatrixXd& g) {
  const int n = int(g.cols()), size = int(g.rows());
  double worst = 0;
  for_each_subset(n, size, [&](std::span<const int> columns) {
    worst = std::max(worst, condition_number(select_rows(g.transpose(), columns)));
  });
  return worst;
}

TEST(CodingCyclicMdsTest, GaussianGeneratorIsBetterConditionedThanVandermonde) {
  // Ye & Abbe's construction is the same with a real Vandermonde generator; even on
  // Chebyshev nodes its conditioning grows exponentially in n (docs/coding.md §4.1, property 10).
  for (const int n : {16, 24}) {
    const int rows = n - 2;  // s = 2, m = 2
    Eigen::MatrixXd vandermonde(rows, n);
    for (int i = 0; i < n; ++i) {
      const double node = std::cos((2 * i + 1) * std::numbers::pi / (2 * n));
      for (int r = 0; r < rows; ++r) vandermonde(r, i) = std::pow(node, r);
    }
    const CyclicMdsCode code(n, 2, 2, 7);
    const double gaussian = worst_column_subset_condition(code.generator());
    const double chebyshev = worst_column_subset_condition(vandermonde);
    EXPECT_LT(gaussian, chebyshev) << "n=" << n;
    // docs/coding.md §4.1: 2.4e5 at n = 16 and 2.6e8 at n = 24 for the Vandermonde generator.
    EXPECT_NEAR(chebyshev, n == 16 ? 2.4e5 : 2.6e8, (n == 16 ? 2.4e5 : 2.6e8) * 0.1);
    std::printf("n=%d worst subset cond: Gaussian %.3g, Vandermonde(Chebyshev) %.3g\n", n, gaussian,
                chebyshev);
  }
}

TEST(CodingGroupedMdsTest, AnyTwoOfFourMembersDecodeAndTheGeneratorIsWellConditioned) {
  const GroupedMdsCode code(4, 2, 2, 1, 10);
  EXPECT_EQ(code.computation_load(), 4);
  double worst = 0;
  for_each_subset(4, 2, [&](std::span<const int> columns) {
    Eigen::MatrixXd square(2, 2);
    for (int t = 0; t < 2; ++t) square.col(t) = code.generator().col(columns[t]);
    worst = std::max(worst, condition_number(square));
    const SubBlockDecoding d = code.decode(columns);
    EXPECT_TRUE(d.decodable);
    EXPECT_LT(sub_sum_relative_error(code, d, 3), 1e-9);
  });
  EXPECT_LT(worst, 100.0);
  EXPECT_NEAR(code.worst_condition(), worst, 1e-9 * worst);
  const std::vector<int> one = {2};
  EXPECT_FALSE(code.decode(one).decodable);
}

TEST(CodingGroupedMdsTest, EveryGroupNeedsMMembersAndMessagesAreShort) {
  const GroupedMdsCode code(6, 1, 2, 4, 5);  // two groups of three, any two of each
  EXPECT_EQ(code.support(4), (std::vector<int>{3, 4, 5}));
  const std::vector<int> one_group_short = {0, 1, 4};
  EXPECT_FALSE(code.decode(one_group_short).decodable);
  const auto partials = testing::random_partials(6, 64, 9);
  for_each_subset(6, 4, [&](std::span<const int> s) {
    const int first_group = int(std::count_if(s.begin(), s.end(), [](int i) { return i < 3; }));
    const SubBlockDecoding d = code.decode(s);
    EXPECT_EQ(d.decodable, first_group >= 2 && 4 - first_group >= 2);
    if (!d.decodable) return;
    std::vector<Eigen::VectorXf> messages;
    for (int member : s) messages.push_back(code.encode(member, partials));
    EXPECT_EQ(messages.front().size(), 32);
    const Eigen::VectorXd truth = testing::exact_sum(partials);
    EXPECT_LT((code.combine(d, messages, 64).cast<double>() - truth).norm() / truth.norm(), 1e-4);
  });
}

TEST(CodingGroupedMdsTest, BadShapesAreNamed) {
  testing::expect_invalid_argument([] { GroupedMdsCode(10, 2, 2); }, "s+m = 4 to divide n = 10");
  testing::expect_invalid_argument([] { CyclicMdsCode(4, 3, 2); }, "s+m <= n");
  testing::expect_invalid_argument([] { GroupedMdsCode(4, 2, 0); }, "m >= 1");
}

}  // namespace
}  // namespace fastk::coding
