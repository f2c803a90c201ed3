// A spanning tree of a communication graph: the edges a connectivity-preserving peer always
// waits for ([consensus] keep_connected, docs/protocol.md §5.8). Every peer derives the same
// tree from the graph alone, so no coordination is needed.
#pragma once

#include <vector>

#include "topology/graph.h"

namespace fastk::topology {

// The breadth-first tree rooted at the peer of highest degree (the lowest id among ties):
// each other peer hangs from its lowest-id neighbour one hop closer to the root. A shallow
// tree keeps the chain of peers that wait for one another short. Entry i lists peer i's tree
// neighbours (its parent and children), sorted; n - 1 edges in all. O(n + m).
std::vector<std::vector<PeerId>> spanning_tree(const Graph& graph);

}  // namespace fastk::topology
