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
// sizes (a ring of 2, a torus with 2 rows) would otherwise produce an edge twice. The edges
// come out sorted (Graph sorts them anyway), and removing one is O(log m): a vector of them in
// insertion order made every rewiring of watts_strogatz O(m).
class EdgeSet {
 public:
  void add(PeerId a, PeerId b) {
    if (a == b) return;
    if (a > b) std::swap(a, b);
    seen_.insert({a, b});
  }
  bool contains(PeerId a, PeerId b) const {
    if (a > b) std::swap(a, b);
    return seen_.count({a, b}) > 0;
  }
  void remove(PeerId a, PeerId b) {
    if (a > b) std::swap(a, b);
    seen_.erase({a, b});
  }
  std::vector<Edge> take() {
    std::vector<Edge> edges;
    edges.reserve(seen_.size());
    for (const auto& [a, b] : seen_) edges.push_back({a, b});
    seen_.clear();
    return edges;
  }

 private:
  std::set<std::pair<PeerId, PeerId>> seen_;
};

// The free stubs of the pairing model, in their original order, with the i-th free one found
// and removed in O(log n) (a Fenwick tree over "still free"). Removing from a vector, as
// earlier versions did, was O(n) per pair and took minutes at 100,000 peers; the i-th free
// stub is the same as there, so every seed gives the graph it gave before.
class FreeStubs {
 public:
  FreeStubs(int peers, int degree)
      : free_(static_cast<std::size_t>(peers) * static_cast<std::size_t>(degree)),
        tree_(free_ + 1, 0),
        degree_(degree) {
    for (std::size_t i = 1; i <= free_; ++i) {  // every stub free: linear-time build
      tree_[i] += 1;
      const std::size_t parent = i + (i & (~i + 1));
      if (parent <= free_) tree_[parent] += tree_[i];
    }
    while (top_ * 2 <= free_) top_ *= 2;
  }
  std::size_t size() const { return free_; }
  bool empty() const { return free_ == 0; }
  // Position (in the original order) of the i-th free stub, 0-based.
  std::size_t position(std::size_t i) const {
    std::size_t at = 0;
    for (std::size_t step = top_; step > 0; step /= 2) {
      if (at + step < tree_.size() && tree_[at + step] <= i) {
        at += step;
        i -= tree_[at];
      }
    }
    return at;  // the 1-based index at + 1 holds it
  }
  PeerId peer_at(std::size_t position) const { return static_cast<PeerId>(position / degree_); }
  void remove(std::size_t position) {
    for (std::size_t i = position + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] -= 1;
    --free_;
  }

 private:
  std::size_t free_;
  std::vector<std::size_t> tree_;
  std::size_t degree_;
  std::size_t top_ = 1;
};

// Up to this many peers erdos_renyi draws every pair, as it always did (the same graphs for
// the same seeds); above, which was refused before, it skips.
constexpr int kPairByPairPeers = 2048;

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
    FreeStubs stubs(peers, degree);
    EdgeSet e;
    bool stuck = false;
    while (!stubs.empty() && !stuck) {
      std::uniform_int_distribution<std::size_t> pick(0, stubs.size() - 1);
      bool paired = false;
      for (std::size_t tries = 0; tries < 50 * stubs.size() && !paired; ++tries) {
        const std::size_t x = pick(rng), y = pick(rng);
        if (x == y) continue;
        const std::size_t at_x = stubs.position(x), at_y = stubs.position(y);
        const PeerId a = stubs.peer_at(at_x), b = stubs.peer_at(at_y);
        if (a == b || e.contains(a, b)) continue;
        e.add(a, b);
        stubs.remove(at_x);
        stubs.remove(at_y);
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
  EdgeSet e;
  if (peers <= kPairByPairPeers || probability == 1.0) {
    std::bernoulli_distribution coin(probability);
    for (int i = 0; i < peers; ++i)
      for (int j = i + 1; j < peers; ++j)
        if (coin(rng)) e.add(i, j);
  } else {
    // Batagelj and Brandes (2005): jump over the pairs that get no edge by a geometric number
    // of them, O(n + m) instead of a draw for each of n^2 / 2 pairs (minutes at 100,000).
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double log_q = std::log1p(-probability);
    std::int64_t v = 1, w = -1;
    while (v < peers) {
      w += 1 + static_cast<std::int64_t>(std::floor(std::log1p(-uniform(rng)) / log_q));
      while (w >= v && v < peers) {
        w -= v;
        ++v;
      }
      if (v < peers) e.add(static_cast<PeerId>(w), static_cast<PeerId>(v));
    }
  }
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
