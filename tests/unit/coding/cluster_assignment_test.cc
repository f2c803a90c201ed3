// GC-DC greedy assignment (coding.md 4.5; property 18 of section 8).
#include "coding/cluster_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>

namespace fastk::coding {
namespace {

TEST(CodingClusterAssignmentTest, HandWorkedHeterogeneousExample) {
  // Group sums 1.0 and 1.1: group 1 goes first. Worker 2 (0.8) -> cluster 0, worker 3 (0.3)
  // -> cluster 1; then worker 0 (0.9) -> cluster 1 (load 0.3 < 0.8), worker 1 -> cluster 0.
  const std::vector<double> predicted = {0.9, 0.1, 0.8, 0.3};
  EXPECT_EQ(assign_clusters({{0, 1}, {2, 3}}, 2, predicted), (std::vector<int>{1, 0, 0, 1}));
}

TEST(CodingClusterAssignmentTest, TiesGoToTheLowerClusterAndWorkersOutsideGroupsGetMinusOne) {
  const std::vector<double> predicted = {0, 0, 0, 1};
  EXPECT_EQ(assign_clusters({{0, 1, 2}}, 3, predicted), (std::vector<int>{0, 1, 2, -1}));
}

TEST(CodingClusterAssignmentTest, WorstClusterIsCeilOfStragglersOverClustersAndGroupsAreRespected) {
  std::mt19937_64 rng(20261122);
  for (int instance = 0; instance < 500; ++instance) {
    const int clusters = 2 + int(rng() % 5);     // P in 2..6
    const int group_count = 2 + int(rng() % 6);  // positions per cluster
    std::vector<int> ids(clusters * group_count);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<std::vector<int>> groups(group_count);
    for (int g = 0; g < group_count; ++g) {
      groups[g].assign(ids.begin() + g * clusters, ids.begin() + (g + 1) * clusters);
    }
    std::vector<double> predicted(ids.size());
    const double straggle_rate = (rng() % 100) / 100.0;
    int stragglers = 0;
    for (double& p : predicted) {
      p = (rng() % 1000) / 1000.0 < straggle_rate ? 1.0 : 0.0;
      stragglers += int(p);
    }

    const std::vector<int> cluster = assign_clusters(groups, clusters, predicted);

    std::vector<int> per_cluster(clusters, 0);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::set<int> used;  // a group fills each position of each cluster exactly once
      for (int w : groups[g]) {
        ASSERT_GE(cluster[w], 0);
        ASSERT_LT(cluster[w], clusters);
        EXPECT_TRUE(used.insert(cluster[w]).second) << "group " << g << " twice in a cluster";
        per_cluster[cluster[w]] += int(predicted[w]);
      }
    }
    const int worst = *std::max_element(per_cluster.begin(), per_cluster.end());
    EXPECT_EQ(worst, (stragglers + clusters - 1) / clusters)
        << "instance " << instance << ": M=" << stragglers << " P=" << clusters;
  }
}

TEST(CodingClusterAssignmentTest, SmallerGroupsStillGetDistinctClusters) {
  const std::vector<double> predicted = {1, 1, 1, 0, 0};
  const std::vector<int> cluster = assign_clusters({{0, 3}, {1, 4}, {2}}, 3, predicted);
  // Three predicted stragglers in three different clusters.
  EXPECT_EQ(std::set<int>({cluster[0], cluster[1], cluster[2]}).size(), 3u);
  EXPECT_NE(cluster[0], cluster[3]);
  EXPECT_NE(cluster[1], cluster[4]);
}

void expect_error(const std::vector<std::vector<int>>& groups, int clusters,
                  const std::vector<double>& predicted, const std::string& fragment) {
  try {
    assign_clusters(groups, clusters, predicted);
    FAIL() << "expected an error mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CodingClusterAssignmentTest, BadInputIsNamed) {
  const std::vector<double> two = {0, 0};
  expect_error({{0, 1}}, 0, two, "at least one cluster");
  expect_error({{0, 1}}, 1, two, "group 0 has 2 workers but there are only 1 clusters");
  expect_error({{0, 2}}, 2, two, "group 0 names worker 2");
  expect_error({{0, -1}}, 2, two, "names worker -1");
  expect_error({{0}, {0}}, 2, two, "worker 0 is in group 0 and in group 1");
  expect_error({{0, 1}}, 2, {0.5, 1.5}, "worker 1 is 1.5");
}

TEST(CodingClusterAssignmentTest, Deterministic) {
  const std::vector<double> predicted = {0.3, 0.3, 0.2, 0.7, 0.1, 0.1};
  const std::vector<std::vector<int>> groups = {{0, 1, 2}, {3, 4, 5}};
  EXPECT_EQ(assign_clusters(groups, 3, predicted), assign_clusters(groups, 3, predicted));
}

}  // namespace
}  // namespace fastk::coding
