#include "topology/families.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

namespace fastk::topology {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

void require_peers(int peers, int minimum, const char* family) {
  require(peers >= minimum, std::string(family) + " needs at least " + std::to_string(minimum) +
                                " peers, got " + std::to_string(peers));
}

// Collects undirected edges, ignoring repeats and self loops. Wrap-around families with tiny
// sizes (a ring of 2, a torus with 2 rows) would otherwise produce an edge twice.
class EdgeSet {
 public:
  void add(PeerId a, PeerId b) {
    if (a == b) return;
    if (a > b) std::swap(a, b);
    if (seen_.insert({a, b}).second) edges_.push_back({a, b});
  }
  bool contains(PeerId a, PeerId b) const {
    if (a > b) std::swap(a, b);
    return seen_.count({a, b}) > 0;
  }
  void remove(PeerId a, PeerId b) {
    if (a > b) std::swap(a, b);
    seen_.erase({a, b});
    std::erase(edges_, Edge{a, b});
  }
  std::vector<Edge> take() { return std::move(edges_); }
  const std::vector<Edge>& edges() const { return edges_; }

 private:
  std::set<std::pair<PeerId, PeerId>> seen_;
  std::vector<Edge> edges_;
};

std::string seed_hint(std::uint64_t seed) {
  return " (seed " + std::to_string(seed) + "; try another seed or denser parameters)";
}

}  // namespace

Graph ring(int peers) {
  require_peers(peers, 1, "ring");
  EdgeSet e;
  for (int i = 0; i < peers; ++i) e.add(i, (i + 1) % peers);
  return Graph(peers, e.take());
}

Graph path(int peers) {
  require_peers(peers, 1, "path");
  EdgeSet e;
  for (int i = 0; i + 1 < peers; ++i) e.add(i, i + 1);
  return Graph(peers, e.take());
}

Graph torus(int rows, int cols) {
  require(rows >= 1 && cols >= 1, "torus needs rows >= 1 and cols >= 1, got " +
                                      std::to_string(rows) + "x" + std::to_string(cols));
  EdgeSet e;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      e.add(r * cols + c, r * cols + (c + 1) % cols);
      e.add(r * cols + c, ((r + 1) % rows) * cols + c);
    }
  }
  return Graph(rows * cols, e.take());
}

Graph grid(int rows, int cols) {
  require(rows >= 1 && cols >= 1, "grid needs rows >= 1 and cols >= 1, got " +
                                      std::to_string(rows) + "x" + std::to_string(cols));
  EdgeSet e;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) e.add(r * cols + c, r * cols + c + 1);
      if (r + 1 < rows) e.add(r * cols + c, (r + 1) * cols + c);
    }
  }
  return Graph(rows * cols, e.take());
}

Graph complete(int peers) {
  require_peers(peers, 1, "complete");
  EdgeSet e;
  for (int i = 0; i < peers; ++i)
    for (int j = i + 1; j < peers; ++j) e.add(i, j);
  return Graph(peers, e.take());
}

Graph star(int peers) {
  require_peers(peers, 1, "star");
  EdgeSet e;
  for (int i = 1; i < peers; ++i) e.add(0, i);
  return Graph(peers, e.take());
}

Graph hypercube(int dimension) {
  require(dimension >= 0 && dimension <= 20,
          "hypercube dimension must be in 0..20, got " + std::to_string(dimension));
  const int peers = 1 << dimension;
  EdgeSet e;
  for (int i = 0; i < peers; ++i)
    for (int k = 0; k < dimension; ++k) e.add(i, i ^ (1 << k));
  return Graph(peers, e.take());
}

Graph exponential(int peers) {
  require_peers(peers, 1, "exponential");
  EdgeSet e;
  for (int i = 0; i < peers; ++i)
    for (int hop = 1; hop < peers; hop *= 2) e.add(i, (i + hop) % peers);
  return Graph(peers, e.take());
}

Graph random_regular(int peers, int degree, std::uint64_t seed) {
  require_peers(peers, 1, "random_regular");
  require(degree >= 0 && degree < peers, "random_regular needs 0 <= degree < peers, got degree " +
                                             std::to_string(degree) + " with " +
                                             std::to_string(peers) + " peers");
  require((static_cast<long>(peers) * degree) % 2 == 0,
          "random_regular needs peers * degree to be even, got " + std::to_string(peers) + " * " +
              std::to_string(degree));
  require(peers == 1 || degree >= 1, "random_regular with degree 0 is disconnected");
  require(peers <= 2 || degree >= 2, "random_regular with degree 1 on " + std::to_string(peers) +
                                         " peers is a perfect matching, never connected");
  // Pairing model with incremental rejection: pair random free "stubs" and refuse pairs that
  // would make a self loop or a repeated edge; restart when stuck. Fast for small degrees.
  std::mt19937_64 rng(seed);
  constexpr int kAttempts = 200;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::vector<PeerId> stubs;
    for (int i = 0; i < peers; ++i)
      for (int k = 0; k < degree; ++k) stubs.push_back(i);
    EdgeSet e;
    bool stuck = false;
    while (!stubs.empty() && !stuck) {
      std::uniform_int_distribution<std::size_t> pick(0, stubs.size() - 1);
      bool paired = false;
      for (std::size_t tries = 0; tries < 50 * stubs.size() && !paired; ++tries) {
        std::size_t x = pick(rng), y = pick(rng);
        if (x == y || stubs[x] == stubs[y] || e.contains(stubs[x], stubs[y])) continue;
        e.add(stubs[x], stubs[y]);
        if (x < y) std::swap(x, y);
        stubs.erase(stubs.begin() + static_cast<std::ptrdiff_t>(x));
        stubs.erase(stubs.begin() + static_cast<std::ptrdiff_t>(y));
        paired = true;
      }
      stuck = !paired;
    }
    if (stuck) continue;
    auto edges = e.take();
    if (connected_components(peers, edges).size() == 1) return Graph(peers, std::move(edges));
  }
  throw std::invalid_argument("random_regular(" + std::to_string(peers) + ", " +
                              std::to_string(degree) + ") found no connected simple graph in " +
                              std::to_string(kAttempts) + " attempts" + seed_hint(seed));
}

Graph erdos_renyi(int peers, double probability, std::uint64_t seed) {
  require_peers(peers, 1, "erdos_renyi");
  require(probability > 0.0 && probability <= 1.0,
          "erdos_renyi needs 0 < probability <= 1, got " + std::to_string(probability));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(probability);
  EdgeSet e;
  for (int i = 0; i < peers; ++i)
    for (int j = i + 1; j < peers; ++j)
      if (coin(rng)) e.add(i, j);
  auto edges = e.take();
  auto components = connected_components(peers, edges);
  if (components.size() > 1) {
    throw std::invalid_argument(
        "erdos_renyi(" + std::to_string(peers) + ", p=" + std::to_string(probability) +
        ") drew a disconnected graph with " + std::to_string(components.size()) + " components" +
        seed_hint(seed) + "; connectivity is likely once p > ln(n)/n = " +
        std::to_string(std::log(static_cast<double>(peers)) / peers));
  }
  return Graph(peers, std::move(edges));
}

Graph watts_strogatz(int peers, int nearest, double rewire, std::uint64_t seed) {
  require_peers(peers, 3, "watts_strogatz");
  require(nearest >= 2 && nearest % 2 == 0 && nearest < peers,
          "watts_strogatz needs an even nearest-neighbour count 2 <= k < peers, got k=" +
              std::to_string(nearest));
  require(rewire >= 0.0 && rewire <= 1.0,
          "watts_strogatz needs 0 <= rewire <= 1, got " + std::to_string(rewire));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(rewire);
  std::uniform_int_distribution<PeerId> any_peer(0, peers - 1);
  EdgeSet e;
  for (int i = 0; i < peers; ++i)
    for (int j = 1; j <= nearest / 2; ++j) e.add(i, (i + j) % peers);
  // Rewire in lattice order (by hop, then peer), as in the original construction.
  for (int j = 1; j <= nearest / 2; ++j) {
    for (int i = 0; i < peers; ++i) {
      if (!coin(rng)) continue;
      const PeerId old_target = (i + j) % peers;
      if (!e.contains(i, old_target)) continue;
      for (int tries = 0; tries < 4 * peers; ++tries) {
        PeerId t = any_peer(rng);
        if (t == i || e.contains(i, t)) continue;
        e.remove(i, old_target);
        e.add(i, t);
        break;
      }
    }
  }
  auto edges = e.take();
  if (connected_components(peers, edges).size() > 1) {
    throw std::invalid_argument(
        "watts_strogatz(" + std::to_string(peers) + ", k=" + std::to_string(nearest) +
        ", beta=" + std::to_string(rewire) + ") drew a disconnected graph" + seed_hint(seed));
  }
  return Graph(peers, std::move(edges));
}

}  // namespace fastk::topology
