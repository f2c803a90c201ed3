// Directed graphs: peer a sends to peer b along an arc a -> b, and nothing says b sends back.
// Plain averaging needs row-stochastic weights on what a peer receives, which on a directed
// graph cannot also keep the models' mean; push-sum ([consensus] push_sum, docs/protocol.md
// §4.4) instead has each sender split its mass: column-stochastic weights.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/schedule.h"

namespace fastk::topology {

// Whether every peer reaches every other along arcs (Edge{a, b} is the arc a -> b).
// `unreachable` lists, when not, the peers peer 0 cannot reach or that cannot reach it.
bool strongly_connected(int peers, const std::vector<Edge>& arcs,
                        std::vector<PeerId>* unreachable = nullptr);

// The undirected graph of the arcs (a -> b and b -> a are one edge): whom a peer talks to.
Graph underlying_graph(int peers, const std::vector<Edge>& arcs);

// A fixed directed graph with push-sum weights: peer j keeps 1 / (1 + out-degree of j) of its
// mass and sends the same share to each out-neighbour, so W_ij = 1 / (1 + d_out(j)) for an arc
// j -> i and the columns of W sum to 1 (its rows do not, in general).
class DirectedSchedule final : public TopologySchedule {
 public:
  // Throws std::invalid_argument for ids out of range, self loops, repeated arcs, or a graph
  // that is not strongly connected (naming peers that are cut off).
  DirectedSchedule(int peers, std::vector<Edge> arcs);
  int size() const override { return static_cast<int>(in_.size()); }
  int period() const override { return 1; }
  RoundPeers round(PeerId peer, std::int64_t k) const override;
  const std::vector<Edge>& arcs() const { return arcs_; }

 private:
  std::vector<Edge> arcs_;
  std::vector<std::vector<PeerId>> in_;   // sorted
  std::vector<std::vector<PeerId>> out_;  // sorted
};

}  // namespace fastk::topology
