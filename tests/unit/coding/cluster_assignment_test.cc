// GC-DC greedy assignment (docs/coding.md §6.4; property 18).
#include "coding/cluster_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>

#include "coding/cyclic_repetition_code.h"
#include "tests/unit/coding/coding_test_util.h"

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

TEST(CodingClusterAssignmentTest, ExactPredictionsWithinToleranceLetEveryClusterDecode) {
  // Clustered GC (docs/coding.md §6.1): 24 workers, P = 4 clusters of 6, load r = 3, i.e. a cyclic
  // repetition code CRC(6, 2) inside each cluster. Group g = the 4 workers that may play
  // position g. When ceil(M/P) <= r - 1 = 2 and the prediction is exact, the greedy
  // assignment leaves at most 2 stragglers per cluster, so every cluster decodes.
  const CyclicRepetitionCode cluster_code(6, 2);
  std::vector<std::vector<int>> groups(6);
  for (int w = 0; w < 24; ++w) groups[w % 6].push_back(w);
  std::mt19937_64 rng(99);
  for (int instance = 0; instance < 200; ++instance) {
    std::vector<int> ids(24);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    const int stragglers = int(rng() % 9);  // M <= 8, so ceil(M / 4) <= 2
    std::vector<double> predicted(24, 0.0);
    for (int t = 0; t < stragglers; ++t) predicted[ids[t]] = 1.0;

    const std::vector<int> cluster = assign_clusters(groups, 4, predicted);
    for (int c = 0; c < 4; ++c) {
      std::vector<int> arrived_positions;
      for (int g = 0; g < 6; ++g) {
        for (int w : groups[g]) {
          if (cluster[w] == c && predicted[w] == 0.0) arrived_positions.push_back(g);
        }
      }
      EXPECT_TRUE(cluster_code.decode(arrived_positions).decodable)
          << "instance " << instance << " cluster " << c << " M=" << stragglers;
    }
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
  testing::expect_invalid_argument([&] { assign_clusters(groups, clusters, predicted); }, fragment);
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
