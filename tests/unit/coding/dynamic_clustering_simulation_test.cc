// Statistical sanity of dynamic clustering (docs/coding.md §6.5; property 20): with
// time-correlated Markov stragglers, re-forming the clusters every iteration from the
// estimators' predictions beats fixed clusters, which beat one code over all workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "coding/cluster_assignment.h"
#include "coding/markov_estimator.h"
#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

constexpr int kWorkers = 24, kClusters = 4, kClusterSize = 6, kLoad = 3;

// Time at which `needed` of the given finishing times have arrived.
double order_statistic(std::vector<double> times, int needed) {
  std::nth_element(times.begin(), times.begin() + (needed - 1), times.end());
  return times[needed - 1];
}

// Iteration time of clustered GC: every cluster needs kClusterSize - kLoad + 1 members.
double clustered_time(const std::vector<double>& time, const std::vector<int>& cluster) {
  double slowest = 0;
  for (int c = 0; c < kClusters; ++c) {
    std::vector<double> members;
    for (int w = 0; w < kWorkers; ++w) {
      if (cluster[w] == c) members.push_back(time[w]);
    }
    slowest = std::max(slowest, order_statistic(members, kClusterSize - kLoad + 1));
  }
  return slowest;
}

TEST(CodingDynamicClusteringTest, DynamicBeatsStaticBeatsPlainGradientCoding) {
  const double p_ns = 0.05, p_sn = 0.3;
  std::mt19937_64 rng(2021);
  // Group g = the workers that may play position g (docs/coding.md §6.3); static clusters are the
  // initial assignment, worker w in cluster w / 6.
  std::vector<std::vector<int>> groups(kClusterSize);
  std::vector<int> static_cluster(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    groups[w % kClusterSize].push_back(w);
    static_cluster[w] = w / kClusterSize;
  }
  std::vector<bool> straggling(kWorkers, false);
  std::vector<MarkovStragglerEstimator> estimators(kWorkers);
  testing::MeanEstimate plain, fixed, dynamic;
  std::vector<double> predicted(kWorkers), time(kWorkers);
  for (int t = 0; t < 20000; ++t) {
    for (int w = 0; w < kWorkers; ++w) predicted[w] = estimators[w].predict();
    const std::vector<int> dynamic_cluster = assign_clusters(groups, kClusters, predicted);
    for (int w = 0; w < kWorkers; ++w) {
      const double u = testing::uniform(rng);
      straggling[w] = straggling[w] ? u >= p_sn : u < p_ns;
      // Compute time r (1 + 0.1 Exp(1)); a straggler takes 5 times as long.
      const double base = kLoad * (1.0 - 0.1 * std::log(1.0 - testing::uniform(rng)));
      time[w] = straggling[w] ? 5.0 * base : base;
      estimators[w].observe(straggling[w]);
    }
    plain.add(order_statistic(time, kWorkers - (kLoad - 1)));  // CRC(24, 2)
    fixed.add(clustered_time(time, static_cluster));
    dynamic.add(clustered_time(time, dynamic_cluster));
  }
  std::printf("mean iteration time: GC %.2f, static CGC %.2f, GC-DC %.2f\n", plain.mean(),
              fixed.mean(), dynamic.mean());
  EXPECT_LT(dynamic.mean() + 3 * dynamic.standard_error(), fixed.mean());
  EXPECT_LT(fixed.mean() + 3 * fixed.standard_error(), plain.mean());
  // Reference values of docs/coding.md §6.5 (last-state prediction there, the estimators' here):
  // 12.1 / 5.5 / 4.6.
  EXPECT_NEAR(plain.mean(), 12.1, 0.05 * 12.1);
  EXPECT_NEAR(fixed.mean(), 5.5, 0.05 * 5.5);
  EXPECT_NEAR(dynamic.mean(), 4.6, 0.05 * 4.6);
}

}  // namespace
}  // namespace fastk::coding
