// Splitting a training set's sample indices across peers, reproducibly from a seed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "learning/dataset.h"
#include "learning/specs.h"

namespace fastk::learning {

struct Partition {
  std::vector<std::vector<std::int64_t>> peer_indices;  // sorted indices of each peer
  int peers() const { return int(peer_indices.size()); }
};

// kIid: a seeded shuffle cut into `peers` shares whose sizes differ by at most one.
// kShards: peer p holds classes order[(p*c + j) mod C] for j < c (order: a seeded
//   permutation of the classes); each class is split evenly among the peers holding it.
//   Classes no peer holds (peers*c < C) are left out.
// kDirichlet: for each class, shares q ~ Dirichlet(alpha, ..., alpha) over the peers; the
//   class's shuffled samples are cut at the cumulative shares. A peer may get no sample.
// Regression data (classes == 0): only kIid. Throws std::invalid_argument on bad arguments.
Partition make_partition(std::span<const std::int32_t> labels, int classes, int peers,
                         const PartitionSpec& spec, std::uint64_t seed);
// The same for a data set, including regression data (no labels: kIid over its samples).
Partition make_partition(const Dataset& data, int peers, const PartitionSpec& spec,
                         std::uint64_t seed);
// The same from a data set's labels, classes and sample count (labels empty and classes 0
// for regression data), for callers that have not built the Dataset.
Partition make_partition(std::span<const std::int32_t> labels, int classes, std::int64_t samples,
                         int peers, const PartitionSpec& spec, std::uint64_t seed);

struct PartitionReport {
  std::vector<std::int64_t> samples;                 // per peer
  std::vector<std::vector<std::int64_t>> histogram;  // per peer, per class
  int classes = 0;
};
PartitionReport report_partition(const Partition& partition, std::span<const std::int32_t> labels,
                                 int classes);
// One line per peer: "peer 3: 1500 samples | 0:750 1:750 ...".
std::string format_partition_report(const PartitionReport& report);

}  // namespace fastk::learning
