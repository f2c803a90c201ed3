#include "topology/graph.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <sstream>
#include <stdexcept>

namespace fastk::topology {
namespace {

std::string describe_peers(const std::vector<PeerId>& peers, std::size_t limit = 8) {
  std::ostringstream out;
  out << '{';
  for (std::size_t i = 0; i < peers.size() && i < limit; ++i) out << (i ? ", " : "") << peers[i];
  if (peers.size() > limit) out << ", ... (" << peers.size() << " peers)";
  out << '}';
  return out.str();
}

}  // namespace

std::vector<std::vector<PeerId>> connected_components(int peers, std::span<const Edge> edges) {
  // Union-find with path halving: near-linear and allocation-light for large graphs.
  std::vector<PeerId> parent(static_cast<std::size_t>(peers));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](PeerId x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const Edge& e : edges) parent[find(e.a)] = find(e.b);
  std::vector<std::vector<PeerId>> by_root(static_cast<std::size_t>(peers));
  for (PeerId i = 0; i < peers; ++i) by_root[find(i)].push_back(i);
  std::vector<std::vector<PeerId>> components;
  for (auto& c : by_root)
    if (!c.empty()) components.push_back(std::move(c));
  std::sort(components.begin(), components.end());  // component of peer 0 first
  return components;
}

Graph::Graph(int peers, std::vector<Edge> edges) {
  if (peers < 1)
    throw std::invalid_argument("a graph needs at least 1 peer, got " + std::to_string(peers));
  for (Edge& e : edges) {
    if (e.a < 0 || e.a >= peers || e.b < 0 || e.b >= peers) {
      throw std::invalid_argument("edge " + std::to_string(e.a) + "-" + std::to_string(e.b) +
                                  " names a peer outside 0.." + std::to_string(peers - 1));
    }
    if (e.a == e.b) throw std::invalid_argument("self loop at peer " + std::to_string(e.a));
    if (e.a > e.b) std::swap(e.a, e.b);
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge& x, const Edge& y) { return std::pair(x.a, x.b) < std::pair(y.a, y.b); });
  auto dup = std::adjacent_find(edges.begin(), edges.end());
  if (dup != edges.end()) {
    throw std::invalid_argument("duplicate edge " + std::to_string(dup->a) + "-" +
                                std::to_string(dup->b));
  }
  auto components = connected_components(peers, edges);
  if (components.size() > 1) {
    throw std::invalid_argument("graph is disconnected: " + std::to_string(components.size()) +
                                " components; peers " + describe_peers(components[1]) +
                                " cannot reach peer 0");
  }
  neighbors_.resize(static_cast<std::size_t>(peers));
  for (const Edge& e : edges) {
    neighbors_[e.a].push_back(e.b);
    neighbors_[e.b].push_back(e.a);
  }
  for (auto& n : neighbors_) std::sort(n.begin(), n.end());
  edges_ = std::move(edges);
}

bool Graph::has_edge(PeerId a, PeerId b) const {
  if (a < 0 || a >= size()) return false;
  const auto& n = neighbors_[a];
  return std::binary_search(n.begin(), n.end(), b);
}

int Graph::max_degree() const {
  int d = 0;
  for (const auto& n : neighbors_) d = std::max(d, static_cast<int>(n.size()));
  return d;
}

int Graph::min_degree() const {
  int d = size();
  for (const auto& n : neighbors_) d = std::min(d, static_cast<int>(n.size()));
  return d;
}

std::vector<int> Graph::distances_from(PeerId source) const {
  std::vector<int> dist(static_cast<std::size_t>(size()), -1);
  std::queue<PeerId> frontier;
  dist.at(source) = 0;
  frontier.push(source);
  while (!frontier.empty()) {
    PeerId u = frontier.front();
    frontier.pop();
    for (PeerId v : neighbors_[u]) {
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        frontier.push(v);
      }
    }
  }
  return dist;
}

// iFUB (Crescenzi et al., 2013): the eccentricities of the peers farthest from a central root,
// level by level from the outside in. Once levels >= i are done, every pair with a peer
// there is at most `lower` apart and every other pair at most 2 (i - 1), so the diameter is
// at most max(lower, 2 (i - 1)); the search stops when that equals `lower`. Random and
// small-world graphs settle after a few searches; a budget bounds the rest.
DiameterBounds Graph::diameter_bounds(int max_searches) const {
  PeerId root = 0;
  for (PeerId i = 1; i < size(); ++i) {
    if (degree(i) > degree(root)) root = i;
  }
  const std::vector<int> depth = distances_from(root);
  const int height = *std::max_element(depth.begin(), depth.end());
  std::vector<std::vector<PeerId>> levels(static_cast<std::size_t>(height) + 1);
  for (PeerId i = 0; i < size(); ++i) levels[static_cast<std::size_t>(depth[i])].push_back(i);
  DiameterBounds bounds{height, 2 * height};
  int searches = 1;
  for (int i = height; i >= 1; --i) {
    for (PeerId v : levels[static_cast<std::size_t>(i)]) {
      if (searches >= max_searches) {
        bounds.upper = std::max(bounds.lower, std::min(bounds.upper, 2 * i));
        return bounds;
      }
      const std::vector<int> d = distances_from(v);
      bounds.lower = std::max(bounds.lower, *std::max_element(d.begin(), d.end()));
      ++searches;
    }
    bounds.upper = std::max(bounds.lower, 2 * (i - 1));
    if (bounds.lower >= 2 * (i - 1)) break;
  }
  bounds.upper = bounds.lower;
  return bounds;
}

int Graph::diameter() const { return diameter_bounds(size() + 1).lower; }

}  // namespace fastk::topology
