// Unbiased fixed-weight approximate codes (docs/coding.md §5.6, §5.7; properties 13 and 16).
#include "coding/unbiased_weight_code.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

// Member i holds partitions i, i+1, i+2 (mod n).
std::vector<std::vector<int>> cyclic_holdings(int n, int d) {
  std::vector<std::vector<int>> holdings(n);
  for (int i = 0; i < n; ++i) {
    for (int t = 0; t < d; ++t) holdings[i].push_back((i + t) % n);
  }
  return holdings;
}

TEST(CodingUnbiasedWeightTest, HeterogeneousWeightsHaveTheClosedFormVariance) {
  // One partition held by three members with p = (0.05, 0.4, 0.2): sum (1-p)/p = 24.5.
  const std::vector<double> p = {0.05, 0.4, 0.2};
  const auto code = UnbiasedWeightCode::heterogeneous({{0}, {0}, {0}}, 1, p);
  EXPECT_NEAR(code.encoding()(0, 0), 20.0 / 24.5, 1e-12);
  EXPECT_NEAR(code.encoding()(1, 0), 2.5 / 24.5, 1e-12);
  EXPECT_NEAR(code.encoding()(2, 0), 5.0 / 24.5, 1e-12);
  EXPECT_NEAR(code.partition_variance(0, p), 0.0408, 0.00005);
  // Equal weights 1 / sum(1 - p) are also unbiased but noisier.
  const double equal = 1.0 / (0.95 + 0.6 + 0.8);
  double equal_variance = 0;
  for (double pi : p) equal_variance += pi * (1 - pi) * equal * equal;
  EXPECT_LT(code.partition_variance(0, p), equal_variance);
}

TEST(CodingUnbiasedWeightTest, HeterogeneousWeightsAreUnbiasedAndNeverWorseThanEqualWeights) {
  std::mt19937_64 rng(606);
  for (int instance = 0; instance < 50; ++instance) {
    std::vector<double> p(6);
    for (double& pi : p) pi = 0.02 + 0.9 * testing::uniform(rng);
    const auto holdings = cyclic_holdings(6, 3);
    const auto code = UnbiasedWeightCode::heterogeneous(holdings, 6, p);
    for (int j = 0; j < 6; ++j) {
      double expected_alpha = 0, alive = 0, equal_variance = 0;
      for (int i = 0; i < 6; ++i) {
        expected_alpha += (1 - p[i]) * code.encoding()(i, j);
        if (code.encoding()(i, j) != 0.0) alive += 1 - p[i];
      }
      for (int i = 0; i < 6; ++i) {
        if (code.encoding()(i, j) != 0.0) equal_variance += p[i] * (1 - p[i]) / (alive * alive);
      }
      EXPECT_NEAR(expected_alpha, 1.0, 1e-12);
      EXPECT_LE(code.partition_variance(j, p), equal_variance * (1 + 1e-12));
    }
  }
}

// alpha_j of the code's decoder over 20000 independent straggler draws, per partition.
std::vector<testing::MeanEstimate> sample_alpha(const GradientCode& code,
                                                const std::vector<double>& straggle,
                                                std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<testing::MeanEstimate> alpha(code.partitions());
  for (int t = 0; t < 20000; ++t) {
    const Decoding d = code.decode(testing::draw_arrivals(straggle, rng));
    for (int j = 0; j < code.partitions(); ++j) alpha[j].add(d.alpha[j]);
  }
  return alpha;
}

TEST(CodingUnbiasedWeightTest, MonteCarloMeanAlphaIsOneForHeterogeneousWeights) {
  const std::vector<double> p = {0.05, 0.4, 0.2, 0.6, 0.1, 0.3};
  const auto code = UnbiasedWeightCode::heterogeneous(cyclic_holdings(6, 3), 6, p);
  const auto alpha = sample_alpha(code, p, 7);
  for (int j = 0; j < 6; ++j) {
    EXPECT_NEAR(alpha[j].mean(), 1.0, 3 * alpha[j].standard_error()) << "partition " << j;
    EXPECT_NEAR(alpha[j].variance(), code.partition_variance(j, p),
                0.1 * code.partition_variance(j, p));
  }
}

TEST(CodingUnbiasedWeightTest, MonteCarloMeanAlphaIsOneForStochasticGradientCoding) {
  const double p = 0.3;
  const auto code = UnbiasedWeightCode::stochastic(cyclic_holdings(8, 3), 8, p);
  EXPECT_NEAR(code.encoding()(0, 0), 1.0 / (3 * 0.7), 1e-15);
  const auto alpha = sample_alpha(code, std::vector<double>(8, p), 8);
  for (int j = 0; j < 8; ++j) {
    EXPECT_NEAR(alpha[j].mean(), 1.0, 3 * alpha[j].standard_error()) << "partition " << j;
  }
}

TEST(CodingUnbiasedWeightTest, ReliableHoldersCarryThePartitionAlone) {
  const std::vector<double> p = {0.0, 0.5, 0.0};
  const auto code = UnbiasedWeightCode::heterogeneous({{0}, {0}, {0}}, 1, p);
  EXPECT_DOUBLE_EQ(code.encoding()(0, 0), 0.5);
  EXPECT_DOUBLE_EQ(code.encoding()(1, 0), 0.0);
  EXPECT_DOUBLE_EQ(code.encoding()(2, 0), 0.5);
  EXPECT_DOUBLE_EQ(code.partition_variance(0, p), 0.0);
}

TEST(CodingUnbiasedWeightTest, ImpossibleOrMalformedPlacementsAreNamed) {
  const auto expect_rejected = [](const std::vector<std::vector<int>>& holdings, int partitions,
                                  const std::vector<double>& p, const std::string& fragment) {
    testing::expect_invalid_argument(
        [&] { UnbiasedWeightCode::heterogeneous(holdings, partitions, p); }, fragment);
  };
  expect_rejected({{0}, {0}}, 1, {1.0, 1.0}, "every holder of partition 0 always straggles");
  expect_rejected({{0}, {0}}, 2, {0.5, 0.5}, "partition 1 has no holder");
  expect_rejected({{0}, {2}}, 2, {0.5, 0.5}, "member 1 holds partition 2");
  expect_rejected({{0}, {0}}, 1, {0.5, 1.5}, "member 1 is 1.5");
  expect_rejected({{0}, {0}}, 1, {0.5}, "2 members, 1 probabilities");
  testing::expect_invalid_argument([] { UnbiasedWeightCode::stochastic({{0}}, 1, 1.0); }, "[0, 1)");
}

}  // namespace
}  // namespace fastk::coding
