#include "topology/spanning_tree.h"

#include <algorithm>

namespace fastk::topology {

std::vector<std::vector<PeerId>> spanning_tree(const Graph& graph) {
  const int n = graph.size();
  PeerId root = 0;
  for (PeerId i = 1; i < n; ++i) {
    if (graph.degree(i) > graph.degree(root)) root = i;
  }
  const std::vector<int> depth = graph.distances_from(root);
  std::vector<std::vector<PeerId>> tree(static_cast<std::size_t>(n));
  for (PeerId v = 0; v < n; ++v) {
    if (v == root) continue;
    // neighbors() is sorted: the first one a hop closer is the lowest-id parent. A Graph is
    // connected, so every peer but the root has one.
    for (PeerId u : graph.neighbors(v)) {
      if (depth[static_cast<std::size_t>(u)] == depth[static_cast<std::size_t>(v)] - 1) {
        tree[static_cast<std::size_t>(v)].push_back(u);
        tree[static_cast<std::size_t>(u)].push_back(v);
        break;
      }
    }
  }
  for (auto& neighbours : tree) std::sort(neighbours.begin(), neighbours.end());
  return tree;
}

}  // namespace fastk::topology
