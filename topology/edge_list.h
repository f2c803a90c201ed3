// Reading graphs from edge-list files: one "a b" pair of peer ids per line; '#' starts a
// comment; blank lines are ignored.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "topology/graph.h"

namespace fastk::topology {

// The pairs of a file as written, before they are read as a graph's edges or as arcs.
struct EdgePairs {
  int peers = 0;
  std::vector<Edge> pairs;
};

// `source` names the input in error messages ("edges.txt:7: ..."). When `peers` is given,
// ids must lie in [0, peers); otherwise there are max id + 1 peers. Throws
// std::invalid_argument for a malformed line (with its number), a self loop or no pairs.
EdgePairs parse_edge_pairs(std::istream& in, const std::string& source,
                           std::optional<int> peers = std::nullopt);
// Throws std::runtime_error when the file cannot be opened.
EdgePairs read_edge_pairs(const std::string& path, std::optional<int> peers = std::nullopt);

// The pairs as undirected edges; also throws std::invalid_argument for an invalid graph.
Graph parse_edge_list(std::istream& in, const std::string& source,
                      std::optional<int> peers = std::nullopt);
Graph read_edge_list(const std::string& path, std::optional<int> peers = std::nullopt);

}  // namespace fastk::topology
