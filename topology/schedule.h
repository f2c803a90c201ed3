// Who a peer exchanges models with in gossip round k, and with what weights. Static graphs
// give the same answer every round; time-varying schedules (one-peer exponential) cycle.
// The consensus protocol asks only this interface, so both kinds run on the same machine.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "topology/graph.h"
#include "topology/mixing.h"

namespace fastk::topology {

struct RoundPeers {
  std::vector<PeerId> receive_from;     // whose models peer i averages in this round
  std::vector<double> receive_weights;  // W_ij, aligned with receive_from
  double self_weight = 1.0;             // W_ii
  std::vector<PeerId> send_to;          // who averages peer i's model in this round
};

class TopologySchedule {
 public:
  virtual ~TopologySchedule() = default;
  virtual int size() const = 0;
  // Rounds before the schedule repeats: 1 for a static graph.
  virtual int period() const = 0;
  virtual RoundPeers round(PeerId peer, std::int64_t k) const = 0;
  // Peer's neighbours in the graph's spanning tree (spanning_tree.h), for a schedule on one
  // fixed graph; nullopt when the neighbours change from round to round.
  virtual std::optional<std::vector<PeerId>> spanning_tree_neighbours(PeerId /*peer*/) const {
    return std::nullopt;
  }
  // The one undirected graph every round uses; nullptr when rounds differ or arcs are
  // directed.
  virtual const Graph* fixed_graph() const { return nullptr; }
  // W(k), for analysis and tests: O(n + entries) time and memory.
  MixingMatrix matrix(std::int64_t k) const;
};

// Every peer `peer` receives from (`receive`) or sends to in some round of `schedule`, sorted.
std::vector<PeerId> peers_over_rounds(const TopologySchedule& schedule, PeerId peer, bool receive);

class StaticSchedule final : public TopologySchedule {
 public:
  // `weights` must be an n x n mixing matrix whose off-diagonal support lies on graph edges.
  StaticSchedule(Graph graph, MixingMatrix weights);
  int size() const override { return graph_.size(); }
  int period() const override { return 1; }
  RoundPeers round(PeerId peer, std::int64_t k) const override;
  std::optional<std::vector<PeerId>> spanning_tree_neighbours(PeerId peer) const override;
  const Graph* fixed_graph() const override { return &graph_; }

 private:
  Graph graph_;
  MixingMatrix weights_;
  std::vector<std::vector<PeerId>> tree_;  // spanning_tree(graph_): one BFS, O(n + m)
};

// One-peer exponential graph: in round k every peer i averages half-half with peer
// i - 2^(k mod t) and sends to i + 2^(k mod t) (mod n), t = ceil(log2 n). Each W(k) is a
// doubly stochastic permutation mix; for n a power of two the product over one period is
// exact averaging.
class OnePeerExponentialSchedule final : public TopologySchedule {
 public:
  explicit OnePeerExponentialSchedule(int peers);
  int size() const override { return peers_; }
  int period() const override { return period_; }
  RoundPeers round(PeerId peer, std::int64_t k) const override;

 private:
  int peers_;
  int period_;
};

}  // namespace fastk::topology
