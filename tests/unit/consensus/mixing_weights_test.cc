#include "consensus/mixing_weights.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace fastk::consensus {
namespace {

double row_sum(const SubsetRow& row) {
  return std::accumulate(row.weights.begin(), row.weights.end(), row.self_weight);
}

TEST(SubsetRow, EveryRuleGivesRowsSummingToOneForRandomSubsets) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int d = 1 + trial % 7;
    std::vector<double> w(static_cast<std::size_t>(d));
    for (auto& x : w) x = u(rng);
    const double total = std::accumulate(w.begin(), w.end(), 0.0) + u(rng);
    for (auto& x : w) x /= total;
    const double self = 1.0 - std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<int> used;
    for (int j = 0; j < d; ++j) {
      if (rng() % 2) used.push_back(j);
    }
    for (auto rule : {Renormalisation::kReturnToSelf, Renormalisation::kUniform,
                      Renormalisation::kProportional}) {
      const SubsetRow row = subset_row(w, self, used, rule);
      ASSERT_EQ(row.weights.size(), used.size());
      EXPECT_NEAR(row_sum(row), 1.0, 1e-12) << to_string(rule) << " trial " << trial;
      for (double x : row.weights) EXPECT_GE(x, 0.0);
      EXPECT_GE(row.self_weight, 0.0);
    }
  }
}

TEST(SubsetRow, ReturnToSelfWithEveryNeighbourIsTheBaseRow) {
  const std::vector<double> w{0.2, 0.3, 0.1};
  const SubsetRow row =
      subset_row(w, 0.4, std::vector<int>{0, 1, 2}, Renormalisation::kReturnToSelf);
  EXPECT_EQ(row.weights, w);
  EXPECT_NEAR(row.self_weight, 0.4, 1e-15);
}

TEST(SubsetRow, SkippedMassGoesToSelfUniformAndProportionalRescale) {
  const std::vector<double> w{0.2, 0.3, 0.1};
  const std::vector<int> used{1};
  const SubsetRow back = subset_row(w, 0.4, used, Renormalisation::kReturnToSelf);
  EXPECT_DOUBLE_EQ(back.weights[0], 0.3);
  EXPECT_DOUBLE_EQ(back.self_weight, 0.7);
  const SubsetRow uniform = subset_row(w, 0.4, used, Renormalisation::kUniform);
  EXPECT_DOUBLE_EQ(uniform.weights[0], 0.5);
  const SubsetRow prop = subset_row(w, 0.4, used, Renormalisation::kProportional);
  EXPECT_DOUBLE_EQ(prop.weights[0], 0.3 / 0.7);
  EXPECT_DOUBLE_EQ(prop.self_weight, 0.4 / 0.7);
}

TEST(SubsetRow, ParsesNamesAndRejectsUnknownOnes) {
  EXPECT_EQ(parse_renormalisation("proportional"), Renormalisation::kProportional);
  EXPECT_THROW(parse_renormalisation("magic"), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::consensus
