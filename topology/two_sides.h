// The two sides of a bipartite graph: AD-PSGD's active and passive peers ([consensus]
// policy = "ad_psgd", docs/protocol.md §4.5). Only an active peer starts a pairwise average,
// and only with a passive neighbour, so no peer is ever in two averages at once and two
// averages never wait on each other. Every peer derives the same sides from the graph alone.
#pragma once

#include <optional>
#include <vector>

#include "topology/graph.h"

namespace fastk::topology {

struct TwoSides {
  // active[i]: peer i is on peer 0's side (an even number of hops from it).
  std::vector<bool> active;
  // Two neighbours on the same side when the graph has an odd cycle (it is not bipartite);
  // nullopt when the sides are valid.
  std::optional<Edge> conflict;
};

// Sides by the parity of the hop distance from peer 0. O(n + m).
TwoSides two_sides(const Graph& graph);

}  // namespace fastk::topology
