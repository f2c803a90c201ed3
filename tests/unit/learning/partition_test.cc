#include "learning/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "learning/data_sources.h"
#include "learning/random.h"

namespace fastk::learning {
namespace {

// 1000 samples, 10 classes, 100 each, in a scrambled order.
std::vector<std::int32_t> balanced_labels() {
  std::vector<std::int32_t> labels;
  for (int i = 0; i < 1000; ++i) labels.push_back((i * 7) % 10);
  return labels;
}

// Every sample is held by at most one peer; returns how many are held.
std::size_t check_disjoint(const Partition& p) {
  std::set<std::int64_t> seen;
  std::size_t total = 0;
  for (const auto& indices : p.peer_indices) {
    EXPECT_TRUE(std::is_sorted(indices.begin(), indices.end()));
    for (auto i : indices) EXPECT_TRUE(seen.insert(i).second) << "sample " << i << " twice";
    total += indices.size();
  }
  return total;
}

TEST(Partition, IidCoversEverySampleInNearlyEqualShares) {
  auto labels = balanced_labels();
  Partition p = make_partition(labels, 10, 7, {.kind = PartitionKind::kIid}, 3);
  ASSERT_EQ(p.peers(), 7);
  EXPECT_EQ(check_disjoint(p), labels.size());
  for (const auto& indices : p.peer_indices) {
    EXPECT_GE(indices.size(), 142u);
    EXPECT_LE(indices.size(), 143u);
  }
}

TEST(Partition, SameSeedSamePartitionOtherSeedOther) {
  auto labels = balanced_labels();
  PartitionSpec spec{.kind = PartitionKind::kDirichlet, .alpha = 0.3};
  EXPECT_EQ(make_partition(labels, 10, 5, spec, 1).peer_indices,
            make_partition(labels, 10, 5, spec, 1).peer_indices);
  EXPECT_NE(make_partition(labels, 10, 5, spec, 1).peer_indices,
            make_partition(labels, 10, 5, spec, 2).peer_indices);
}

TEST(Partition, ShardsGiveEachPeerExactlyItsClasses) {
  auto labels = balanced_labels();
  Partition p =
      make_partition(labels, 10, 5, {.kind = PartitionKind::kShards, .classes_per_peer = 2}, 4);
  EXPECT_EQ(check_disjoint(p), labels.size());  // 5 peers x 2 classes cover all 10
  PartitionReport r = report_partition(p, labels, 10);
  for (int peer = 0; peer < 5; ++peer) {
    int held = 0;
    for (auto count : r.histogram[std::size_t(peer)]) held += count > 0;
    EXPECT_EQ(held, 2) << "peer " << peer;
    EXPECT_EQ(r.samples[std::size_t(peer)], 200);
  }
}

TEST(Partition, ShardsSplitAClassAmongItsHolders) {
  auto labels = balanced_labels();
  Partition p =
      make_partition(labels, 10, 10, {.kind = PartitionKind::kShards, .classes_per_peer = 3}, 4);
  EXPECT_EQ(check_disjoint(p), labels.size());
  PartitionReport r = report_partition(p, labels, 10);
  for (int peer = 0; peer < 10; ++peer) {
    // Three classes, each split three ways into 33 or 34 samples.
    EXPECT_NEAR(double(r.samples[std::size_t(peer)]), 100.0, 2.0) << "peer " << peer;
  }
}

TEST(Partition, SmallDirichletAlphaSkewsLabels) {
  auto labels = balanced_labels();
  Partition p =
      make_partition(labels, 10, 4, {.kind = PartitionKind::kDirichlet, .alpha = 0.05}, 9);
  EXPECT_EQ(check_disjoint(p), labels.size());
  PartitionReport r = report_partition(p, labels, 10);
  int dominated = 0;
  for (std::size_t peer = 0; peer < 4; ++peer) {
    if (r.samples[peer] == 0) continue;
    const auto top = *std::max_element(r.histogram[peer].begin(), r.histogram[peer].end());
    dominated += double(top) >= 0.2 * double(r.samples[peer]);  // iid would be about 0.1
  }
  EXPECT_GE(dominated, 3);
}

TEST(Partition, BadArgumentsAreExplained) {
  auto labels = balanced_labels();
  EXPECT_THROW(make_partition(labels, 10, 0, {}, 1), std::invalid_argument);
  try {
    make_partition(labels, 10, 3, {.kind = PartitionKind::kShards, .classes_per_peer = 11}, 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "partition 'shards': classes_per_peer must be in 1..10, got 11");
  }
  EXPECT_THROW(
      make_partition(std::vector<std::int32_t>{}, 0, 2, {.kind = PartitionKind::kDirichlet}, 1),
      std::invalid_argument);
}

TEST(Partition, RegressionDataSplitsIidOnly) {
  TrainTest data = make_least_squares(101, 1, 2, 0.1, 1);
  Partition p = make_partition(data.train, 4, {}, 5);
  EXPECT_EQ(check_disjoint(p), 101u);
  EXPECT_EQ(p.peer_indices[0].size() + p.peer_indices[3].size(), 50u);
  EXPECT_THROW(make_partition(data.train, 4, {.kind = PartitionKind::kShards}, 5),
               std::invalid_argument);
  EXPECT_EQ(format_partition_report(report_partition(p, {}, 0)).substr(0, 19),
            "peer 0: 25 samples\n");
}

TEST(Partition, ReportFormatsSamplesAndHistogram) {
  std::vector<std::int32_t> labels = {0, 1, 1, 0};
  Partition p{{{0, 1}, {2, 3}}};
  EXPECT_EQ(format_partition_report(report_partition(p, labels, 2)),
            "peer 0: 2 samples | 0:1 1:1\npeer 1: 2 samples | 0:1 1:1\n");
}

// mix64 is SplitMix64's output function: the published first outputs of the generator seeded
// with 0 (0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4), which every stateless draw of the project
// (straggler delays, ad_psgd partners, sampling seeds) relies on staying the same.
TEST(Random, Mix64IsSplitMix64sOutput) {
  EXPECT_EQ(mix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(mix64(0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
}

TEST(Random, BelowIsUniformEnoughAndGammaHasItsMean) {
  Rng rng(5);
  std::vector<int> counts(3);
  for (int i = 0; i < 30000; ++i) ++counts[rng.below(3)];
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) sum += rng.gamma(0.5);
  EXPECT_NEAR(sum / 20000, 0.5, 0.03);
}

}  // namespace
}  // namespace fastk::learning
