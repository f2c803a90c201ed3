#include "topology/two_sides.h"

namespace fastk::topology {

TwoSides two_sides(const Graph& graph) {
  const std::vector<int> depth = graph.distances_from(0);  // a Graph is connected
  TwoSides sides;
  for (int d : depth) sides.active.push_back(d % 2 == 0);
  for (const Edge& e : graph.edges()) {
    if (sides.active[static_cast<std::size_t>(e.a)] ==
        sides.active[static_cast<std::size_t>(e.b)]) {
      sides.conflict = e;
      break;
    }
  }
  return sides;
}

}  // namespace fastk::topology
