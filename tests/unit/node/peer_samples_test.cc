// One peer's samples (node/training/peer_samples.h), as both runtimes draw them.
#include "node/training/peer_samples.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "node/training/peer_trainer.h"

namespace fastk::node::training {
namespace {

learning::Partition three_peers() {
  learning::Partition p;
  p.peer_indices = {{0, 3, 6, 9, 12}, {1, 4, 7, 10}, {2, 5, 8, 11, 13, 14}};
  return p;
}

TEST(PeerSamples, RowsAreTheOwnShardThenTheStoredPartitions) {
  const PeerSamples s = peer_samples(three_peers(), 1, {1, 2}, 2, 7);
  EXPECT_EQ(s.own_size, 4);
  EXPECT_EQ(s.rows, (std::vector<std::int64_t>{1, 4, 7, 10, 2, 5, 8, 11, 13, 14}));
  EXPECT_EQ(s.partitions.size(), 2u);
  const PeerSamples plain = peer_samples(three_peers(), 1, {}, 2, 7);
  EXPECT_EQ(plain.rows, (std::vector<std::int64_t>{1, 4, 7, 10}));
  EXPECT_TRUE(plain.partitions.empty());
}

// Every holder of partition r draws r's samples in the order r itself draws them, so all
// holders compute the same partition gradient; and a plain peer draws only its own shard.
TEST(PeerSamples, EveryHolderOfAPartitionDrawsWhatItsOwnerDraws) {
  PeerSamples owner = peer_samples(three_peers(), 2, {2, 0}, 3, 11);
  PeerSamples holder = peer_samples(three_peers(), 0, {0, 2}, 3, 11);
  for (int batch = 0; batch < 10; ++batch) {
    const auto a = owner.to_rows(owner.partitions.at(2).next());
    const auto b = holder.to_rows(holder.partitions.at(2).next());
    EXPECT_EQ(a, b) << "batch " << batch;
    const auto theirs = three_peers().peer_indices[2];
    for (std::int64_t row : a) {
      EXPECT_NE(std::find(theirs.begin(), theirs.end(), row), theirs.end()) << row;
    }
  }
  PeerSamples plain = peer_samples(three_peers(), 0, {}, 2, 11);
  for (int batch = 0; batch < 10; ++batch) {
    for (std::int64_t row : plain.to_rows(plain.own.next())) EXPECT_EQ(row % 3, 0) << row;
  }
}

}  // namespace
}  // namespace fastk::node::training

namespace fastk::node::training {
namespace {

// More peers than samples: groups that each fill a batch, peer i on group i mod groups.
TEST(PartitionTrainingSet, MorePeersThanSamplesShareGroupsThatFillABatch) {
  const std::vector<std::int32_t> labels = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  const learning::DataSpec spec;  // iid
  const learning::Partition p = partition_training_set(labels, 2, 10, spec, 25, 3);
  ASSERT_EQ(p.peers(), 25);
  // 10 samples, batches of 3: 3 groups (of 3, 3 and 4 samples).
  std::vector<std::int64_t> all;
  for (int g = 0; g < 3; ++g) {
    EXPECT_GE(p.peer_indices[static_cast<std::size_t>(g)].size(), 3u) << "group " << g;
    all.insert(all.end(), p.peer_indices[static_cast<std::size_t>(g)].begin(),
               p.peer_indices[static_cast<std::size_t>(g)].end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));  // each once
  for (int i = 3; i < 25; ++i) {
    EXPECT_EQ(p.peer_indices[static_cast<std::size_t>(i)],
              p.peer_indices[static_cast<std::size_t>(i % 3)])
        << "peer " << i;
  }
  // As many peers as samples or fewer: a partition over the peers, as always.
  const learning::Partition own = partition_training_set(labels, 2, 10, spec, 10, 3);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(own.peer_indices[static_cast<std::size_t>(i)].size(), 1u);
}

}  // namespace
}  // namespace fastk::node::training
