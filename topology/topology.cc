#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "topology/directed.h"
#include "topology/edge_list.h"
#include "topology/families.h"

namespace fastk::topology {
namespace {

struct KindName {
  TopologyKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {TopologyKind::kRing, "ring"},
    {TopologyKind::kPath, "path"},
    {TopologyKind::kTorus, "torus"},
    {TopologyKind::kGrid, "grid"},
    {TopologyKind::kComplete, "complete"},
    {TopologyKind::kStar, "star"},
    {TopologyKind::kHypercube, "hypercube"},
    {TopologyKind::kExponential, "exponential"},
    {TopologyKind::kRandomRegular, "random_regular"},
    {TopologyKind::kErdosRenyi, "erdos_renyi"},
    {TopologyKind::kWattsStrogatz, "watts_strogatz"},
    {TopologyKind::kEdgeList, "edge_list"},
    {TopologyKind::kOnePeerExponential, "one_peer_exponential"},
};

// rows x cols = peers with rows <= cols as close as possible.
void resolve_grid_shape(TopologySpec& s) {
  if (s.rows > 0 && s.cols > 0) {
    if (s.peers > 0 && s.rows * s.cols != s.peers) {
      throw std::invalid_argument("rows * cols = " + std::to_string(s.rows * s.cols) +
                                  " does not match peers = " + std::to_string(s.peers));
    }
  } else if (s.rows > 0 || s.cols > 0) {
    int given = s.rows > 0 ? s.rows : s.cols;
    if (s.peers % given != 0) {
      throw std::invalid_argument(std::to_string(s.peers) + " peers do not split into rows of " +
                                  std::to_string(given));
    }
    (s.rows > 0 ? s.cols : s.rows) = s.peers / given;
  } else {
    if (s.peers < 1) throw std::invalid_argument("peers must be at least 1");
    int r = static_cast<int>(std::sqrt(static_cast<double>(s.peers)));
    while (s.peers % r != 0) --r;
    s.rows = r;
    s.cols = s.peers / r;
  }
  s.peers = s.rows * s.cols;
}

// Refuses a graph above the limits (graph.h) before building it: the edges a family will
// have, from its parameters (erdos_renyi: the expected number, with room for chance).
void check_size(const TopologySpec& s) {
  const std::int64_t n =
      std::max<std::int64_t>({s.peers, std::int64_t{s.rows} * std::max(s.cols, 1), s.cols});
  if (n > kMaxPeers) {
    throw std::invalid_argument(std::to_string(n) + " peers: at most " + std::to_string(kMaxPeers) +
                                " (topology.peers)");
  }
  int log2n = 0;
  while ((std::int64_t{1} << log2n) < n) ++log2n;
  double edges = 0;
  switch (s.kind) {
    case TopologyKind::kComplete:
      edges = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
      break;
    case TopologyKind::kExponential:
    case TopologyKind::kOnePeerExponential:
      edges = static_cast<double>(n) * log2n;
      break;
    case TopologyKind::kRandomRegular:
      edges = 0.5 * static_cast<double>(n) * s.degree;
      break;
    case TopologyKind::kErdosRenyi:
      edges = 0.6 * (s.probability > 0 ? s.probability : 1.0) * static_cast<double>(n) *
              static_cast<double>(n - 1);
      break;
    case TopologyKind::kWattsStrogatz:
      edges = 0.5 * static_cast<double>(n) * s.nearest;
      break;
    case TopologyKind::kRing:
    case TopologyKind::kPath:
    case TopologyKind::kStar:
      edges = static_cast<double>(n);
      break;
    case TopologyKind::kTorus:
    case TopologyKind::kGrid:
      edges = 2.0 * static_cast<double>(n);
      break;
    case TopologyKind::kHypercube:
      edges = 0.5 * static_cast<double>(n) * log2n;
      break;
    case TopologyKind::kEdgeList:  // its reader counts the lines
      break;
  }
  if (edges > static_cast<double>(kMaxEdges)) {
    throw std::invalid_argument(
        to_string(s.kind) + " with " + std::to_string(n) + " peers would have about " +
        std::to_string(static_cast<std::int64_t>(edges)) + " edges: at most " +
        std::to_string(kMaxEdges) + " (fewer peers, or a sparser family)");
  }
}

Graph build_graph(TopologySpec& s) {
  if (s.kind == TopologyKind::kErdosRenyi && s.probability == 0 && s.peers > 1) {
    s.probability = std::min(1.0, 2.0 * std::log(static_cast<double>(s.peers)) / s.peers);
  }
  check_size(s);
  switch (s.kind) {
    case TopologyKind::kRing:
      return ring(s.peers);
    case TopologyKind::kPath:
      return path(s.peers);
    case TopologyKind::kTorus:
      resolve_grid_shape(s);
      return torus(s.rows, s.cols);
    case TopologyKind::kGrid:
      resolve_grid_shape(s);
      return grid(s.rows, s.cols);
    case TopologyKind::kComplete:
      return complete(s.peers);
    case TopologyKind::kStar:
      return star(s.peers);
    case TopologyKind::kHypercube: {
      int dimension = 0;
      while ((1 << dimension) < s.peers) ++dimension;
      if (s.peers < 1 || (1 << dimension) != s.peers) {
        throw std::invalid_argument("hypercube needs a power-of-two number of peers, got " +
                                    std::to_string(s.peers));
      }
      return hypercube(dimension);
    }
    case TopologyKind::kExponential:
    case TopologyKind::kOnePeerExponential:
      return exponential(s.peers);
    case TopologyKind::kRandomRegular:
      return random_regular(s.peers, s.degree, s.seed);
    case TopologyKind::kErdosRenyi:
      return erdos_renyi(s.peers, s.probability, s.seed);
    case TopologyKind::kWattsStrogatz:
      return watts_strogatz(s.peers, s.nearest, s.rewire, s.seed);
    case TopologyKind::kEdgeList: {
      if (s.file.empty()) {
        throw std::invalid_argument(
            "kind edge_list needs a file: fastk topo edge_list --file PATH, or [topology] file "
            "in a config");
      }
      Graph g = read_edge_list(s.file, s.peers > 0 ? std::optional<int>(s.peers) : std::nullopt);
      s.peers = g.size();
      return g;
    }
  }
  throw std::invalid_argument("unknown topology kind");
}

}  // namespace

TopologyKind parse_topology_kind(const std::string& name) {
  for (const auto& [kind, kind_name] : kKindNames)
    if (name == kind_name) return kind;
  std::string all;
  for (const auto& n : topology_kind_names()) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown topology kind '" + name + "', expected one of " + all);
}

std::string to_string(TopologyKind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "?";
}

std::vector<std::string> topology_kind_names() {
  std::vector<std::string> names;
  for (const auto& entry : kKindNames) names.emplace_back(entry.name);
  return names;
}

namespace {

Topology build_directed(TopologySpec& s) {
  if (s.kind != TopologyKind::kEdgeList) {
    throw std::invalid_argument(
        "directed = true needs kind = \"edge_list\": the families are "
        "undirected");
  }
  EdgePairs arcs =
      read_edge_pairs(s.file, s.peers > 0 ? std::optional<int>(s.peers) : std::nullopt);
  s.peers = arcs.peers;
  std::shared_ptr<DirectedSchedule> schedule;
  try {
    schedule = std::make_shared<DirectedSchedule>(arcs.peers, arcs.pairs);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(s.file + ": " + e.what());
  }
  Graph graph = underlying_graph(arcs.peers, arcs.pairs);
  MixingMatrix w = schedule->matrix(0);
  return Topology{s, std::move(graph), std::move(w), std::move(schedule)};
}

}  // namespace

Topology build_topology(const TopologySpec& spec) {
  TopologySpec resolved = spec;
  if (resolved.directed) return build_directed(resolved);
  Graph graph = build_graph(resolved);
  if (resolved.kind == TopologyKind::kOnePeerExponential) {
    auto schedule = std::make_shared<OnePeerExponentialSchedule>(graph.size());
    MixingMatrix w0 = schedule->matrix(0);
    return Topology{resolved, std::move(graph), std::move(w0), std::move(schedule)};
  }
  MixingMatrix w;
  if (resolved.weights == WeightRule::kFile) {
    if (resolved.weights_file.empty()) {
      throw std::invalid_argument("weights = \"file\" needs weights_file");
    }
    w = read_weight_matrix(resolved.weights_file, graph.size());
  } else {
    w = mixing_matrix(graph, resolved.weights);
  }
  MixingCheck check =
      check_mixing(w, graph, resolved.weights == WeightRule::kFile ? kWeightsFileTolerance : 1e-9);
  if (!check.usable()) {
    std::string message = "mixing weights are not usable:";
    for (const auto& e : check.errors) message += "\n  " + e;
    throw std::invalid_argument(message);
  }
  auto schedule = std::make_shared<StaticSchedule>(graph, w);
  return Topology{resolved, std::move(graph), std::move(w), std::move(schedule)};
}

}  // namespace fastk::topology
