// Which training samples a peer holds and the samplers that draw its mini-batches, built by
// one function for both runtimes: a real peer loads exactly `rows` (its shard, then the
// partitions it stores in a coded run) and `fastk sim` maps positions through `rows` into the
// whole training set. The samplers draw positions into `rows`, so both runtimes draw the same
// samples in the same order by construction.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "coding/neighbourhood_code.h"
#include "learning/partition.h"
#include "learning/sampler.h"
#include "topology/graph.h"

namespace fastk::node::training {

struct PeerSamples {
  std::vector<std::int64_t> rows;  // training-set indices: the own shard, then stored partitions
  std::int64_t own_size = 0;       // rows[0, own_size) are the own shard
  // The own shard's sampler, for plain gradients.
  learning::BatchSampler own;
  // Coded runs: one sampler per stored partition (peer id; the own one included), seeded
  // like that peer's own, over that partition's positions in `rows`.
  std::map<int, learning::BatchSampler> partitions;
  // The stream validation batches are drawn from (gradient_step.h: validation_positions).
  std::uint64_t validation_seed = 0;

  // The training-set indices of positions drawn from these samplers.
  std::vector<std::int64_t> to_rows(std::span<const std::int64_t> positions) const;
};

// The partitions each peer stores: none without coding, else the coded placement's
// (coded_placement in peer_trainer.h).
std::vector<std::vector<int>> stored_partitions(const topology::Graph& graph,
                                                const coding::NeighbourhoodCodeSpec& coding);

// Peer `peer`'s samples of `partition`; `stored` lists the partitions it holds in a coded run
// (empty: none). `seed`: the optimizer's sampling seed.
PeerSamples peer_samples(const learning::Partition& partition, int peer,
                         const std::vector<int>& stored, int batch_size, std::uint64_t seed);

}  // namespace fastk::node::training
