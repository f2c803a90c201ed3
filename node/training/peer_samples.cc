#include "node/training/peer_samples.h"

#include <numeric>
#include <stdexcept>
#include <string>

#include "node/training/peer_trainer.h"

namespace fastk::node::training {
namespace {

std::vector<std::int64_t> positions(std::size_t first, std::size_t count) {
  std::vector<std::int64_t> range(count);
  std::iota(range.begin(), range.end(), static_cast<std::int64_t>(first));
  return range;
}

}  // namespace

std::vector<std::int64_t> PeerSamples::to_rows(std::span<const std::int64_t> drawn) const {
  std::vector<std::int64_t> out(drawn.size());
  for (std::size_t i = 0; i < drawn.size(); ++i) out[i] = rows[static_cast<std::size_t>(drawn[i])];
  return out;
}

std::vector<std::vector<int>> stored_partitions(const topology::Graph& graph,
                                                const coding::NeighbourhoodCodeSpec& coding) {
  if (coding.scheme == coding::Scheme::kNone) {
    return std::vector<std::vector<int>>(static_cast<std::size_t>(graph.size()));
  }
  return coded_placement(graph, coding).stored;
}

PeerSamples peer_samples(const learning::Partition& partition, int peer,
                         const std::vector<int>& stored, int batch_size, std::uint64_t seed) {
  const auto& own = partition.peer_indices.at(static_cast<std::size_t>(peer));
  if (batch_size > static_cast<int>(own.size())) {
    // Every batch would repeat samples: almost always a batch size meant for the whole set.
    throw std::invalid_argument("optimizer.batch_size = " + std::to_string(batch_size) +
                                " is larger than peer " + std::to_string(peer) + "'s shard of " +
                                std::to_string(own.size()) +
                                " training samples: give at most that, or fewer peers");
  }
  PeerSamples s{own,
                static_cast<std::int64_t>(own.size()),
                learning::BatchSampler(positions(0, own.size()), batch_size, peer_seed(seed, peer)),
                {}};
  // A stream apart from the sampler's: a peer that validates trains on the same batches.
  s.validation_seed = peer_seed(seed ^ 0x76616c6964617465ULL, peer);  // "validate"
  if (stored.empty()) return s;
  s.partitions.emplace(
      peer, learning::BatchSampler(positions(0, own.size()), batch_size, peer_seed(seed, peer)));
  for (int r : stored) {
    if (r == peer) continue;
    const auto& theirs = partition.peer_indices.at(static_cast<std::size_t>(r));
    s.partitions.emplace(r, learning::BatchSampler(positions(s.rows.size(), theirs.size()),
                                                   batch_size, peer_seed(seed, r)));
    s.rows.insert(s.rows.end(), theirs.begin(), theirs.end());
  }
  return s;
}

}  // namespace fastk::node::training
