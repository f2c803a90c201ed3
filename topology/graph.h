// An undirected, connected graph on peers 0..n-1: the communication graph of an experiment.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace fastk::topology {

using PeerId = int;

// The largest graphs fastk builds. Nothing is n x n any more (mixing matrices are sparse,
// spectra iterative above a few thousand peers); what bounds a graph is memory: about 40 bytes
// per edge while a graph is built, and what each simulated peer holds (docs/simulation.md §7
// has the measured bytes per peer). The limits refuse a typo (a million-peer complete graph,
// 5e11 edges) at once instead of after minutes of allocation.
inline constexpr int kMaxPeers = 1'000'000;
inline constexpr std::int64_t kMaxEdges = 20'000'000;

struct Edge {
  PeerId a = 0;
  PeerId b = 0;
  friend bool operator==(const Edge&, const Edge&) = default;
};

struct DiameterBounds {
  int lower = 0;
  int upper = 0;
  bool exact() const { return lower == upper; }
};

// Immutable after construction. The constructor validates: at least one peer, ids in
// [0, n), no self loops, no duplicate edges (a-b and b-a are the same edge), connected.
// Every violation throws std::invalid_argument naming the offending edge or peers, so a
// Graph that exists is always a valid communication graph.
class Graph {
 public:
  Graph(int peers, std::vector<Edge> edges);

  int size() const { return static_cast<int>(neighbors_.size()); }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(edges_.size()); }
  // Edges with a < b, sorted.
  const std::vector<Edge>& edges() const { return edges_; }
  // Sorted ascending.
  std::span<const PeerId> neighbors(PeerId i) const { return neighbors_.at(i); }
  int degree(PeerId i) const { return static_cast<int>(neighbors_.at(i).size()); }
  bool has_edge(PeerId a, PeerId b) const;

  int max_degree() const;
  int min_degree() const;
  // Hop distances from `source` to every peer (BFS).
  std::vector<int> distances_from(PeerId source) const;
  // Longest shortest path, exact; O(n (n + m)) at worst, far less on most graphs.
  int diameter() const;
  // Bounds on it from at most `max_searches` breadth-first searches (exact when equal).
  DiameterBounds diameter_bounds(int max_searches) const;

 private:
  std::vector<std::vector<PeerId>> neighbors_;
  std::vector<Edge> edges_;
};

// Connected components of an edge set on n peers (ids must already be in range).
// Used by Graph's validation and by the random families to report what went wrong.
std::vector<std::vector<PeerId>> connected_components(int peers, std::span<const Edge> edges);

}  // namespace fastk::topology
