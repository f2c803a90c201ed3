// A whole experiment topology built from a plain description (TopologySpec): the graph,
// its mixing weights and the round schedule the protocol follows. The spec is what the
// [topology] table of an experiment config and the flags of `fastk topo` fill in.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/mixing.h"
#include "topology/schedule.h"

namespace fastk::topology {

enum class TopologyKind {
  kRing,
  kPath,
  kTorus,
  kGrid,
  kComplete,
  kStar,
  kHypercube,
  kExponential,
  kRandomRegular,
  kErdosRenyi,
  kWattsStrogatz,
  kEdgeList,
  kOnePeerExponential,  // time-varying: one peer per round
};

// Names as written in configs and on the command line ("ring", "random_regular", ...).
TopologyKind parse_topology_kind(const std::string& name);
std::string to_string(TopologyKind kind);
std::vector<std::string> topology_kind_names();

// Every field has a default; fields a family does not use are ignored.
struct TopologySpec {
  TopologyKind kind = TopologyKind::kRing;
  int peers = 8;           // number of peers (hypercube: a power of two)
  int rows = 0;            // torus/grid; 0 = derive from peers (most square factorisation)
  int cols = 0;            // torus/grid; 0 = derive from peers and rows
  int degree = 4;          // random_regular
  double probability = 0;  // erdos_renyi edge probability; 0 = min(1, 2 ln(n) / n)
  int nearest = 4;         // watts_strogatz: lattice neighbours (even)
  double rewire = 0.1;     // watts_strogatz: rewiring probability
  std::uint64_t seed = 1;  // random families
  std::string file;        // edge_list: path of the edge-list file
  // edge_list: each line "a b" is the arc a -> b (a sends to b), weighted for push-sum
  // (directed.h); `weights` is then not used.
  bool directed = false;
  WeightRule weights = WeightRule::kMetropolisHastings;
  std::string weights_file;  // weights = file: path of the n x n matrix
};

struct Topology {
  TopologySpec spec;  // as resolved (derived rows/cols/probability filled in)
  Graph graph;        // union of all edges used by the schedule (directed: arcs as edges)
  // Static W; for time-varying schedules, W at round 0. Sparse: degree-sized rows.
  MixingMatrix weights;
  std::shared_ptr<const TopologySchedule> schedule;
  bool time_varying() const { return schedule->period() > 1; }
  bool directed() const { return spec.directed; }
};

// Throws std::invalid_argument naming the parameter to fix (more than kMaxPeers peers or
// kMaxEdges edges too, graph.h),
// std::runtime_error for unreadable files. Weight matrices with errors (see check_mixing) are
// rejected here.
Topology build_topology(const TopologySpec& spec);

}  // namespace fastk::topology
