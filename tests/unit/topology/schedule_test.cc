#include "topology/schedule.h"

#include <gtest/gtest.h>

#include "topology/families.h"
#include "topology/mixing.h"

namespace fastk::topology {
namespace {

TEST(StaticSchedule, RoundGivesTheRowOfW) {
  Graph g = star(4);
  MixingMatrix w = mixing_matrix(g, WeightRule::kMetropolisHastings);
  StaticSchedule s(g, w);
  RoundPeers r = s.round(0, 17);
  EXPECT_EQ(r.receive_from, (std::vector<PeerId>{1, 2, 3}));
  EXPECT_EQ(r.send_to, r.receive_from);
  EXPECT_DOUBLE_EQ(r.self_weight, 0.25);
  EXPECT_EQ(s.period(), 1);
  EXPECT_TRUE(dense(s.matrix(3)).isApprox(dense(w)));
}

class OnePeerExponential : public ::testing::TestWithParam<int> {};

TEST_P(OnePeerExponential, EveryRoundIsDoublyStochasticAndConsistent) {
  const int n = GetParam();
  OnePeerExponentialSchedule s(n);
  for (int k = 0; k < 2 * s.period(); ++k) {
    Eigen::MatrixXd w = dense(s.matrix(k));
    EXPECT_TRUE(w.rowwise().sum().isApproxToConstant(1.0)) << "k = " << k;
    EXPECT_TRUE(w.colwise().sum().isApproxToConstant(1.0)) << "k = " << k;
    for (int i = 0; i < n; ++i) {
      RoundPeers r = s.round(i, k);
      ASSERT_EQ(r.receive_from.size(), 1u);
      ASSERT_EQ(r.send_to.size(), 1u);
      // i sends to j exactly when j receives from i.
      EXPECT_EQ(s.round(r.send_to[0], k).receive_from[0], i);
    }
  }
}

TEST_P(OnePeerExponential, PeriodProductAveragesExactlyForPowersOfTwo) {
  const int n = GetParam();
  OnePeerExponentialSchedule s(n);
  Eigen::MatrixXd product = Eigen::MatrixXd::Identity(n, n);
  for (int k = 0; k < s.period(); ++k) product = dense(s.matrix(k)) * product;
  const bool power_of_two = (n & (n - 1)) == 0;
  const Eigen::MatrixXd average = Eigen::MatrixXd::Constant(n, n, 1.0 / n);
  EXPECT_EQ(product.isApprox(average, 1e-12), power_of_two) << "n = " << n;
}

INSTANTIATE_TEST_SUITE_P(Sizes, OnePeerExponential, ::testing::Values(2, 3, 6, 8, 16, 32));

TEST(OnePeerExponentialSchedule, SinglePeerTalksToNobody) {
  OnePeerExponentialSchedule s(1);
  EXPECT_TRUE(s.round(0, 5).receive_from.empty());
  EXPECT_DOUBLE_EQ(s.round(0, 5).self_weight, 1.0);
}

}  // namespace
}  // namespace fastk::topology
