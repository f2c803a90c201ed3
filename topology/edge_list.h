// Reading graphs from edge-list files: one "a b" pair of peer ids per line; '#' starts a
// comment; blank lines are ignored. A first line holding a single integer is the node count
// of decentralizepy's .edges files (its Graph.write_graph_to_file): ids must then lie below
// it, and since that tool writes each undirected edge once from each end, a pair repeated
// (either way round) is one edge there, where a plain file refuses it as a duplicate.
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
  bool counted = false;  // the file began with its node count (decentralizepy's format)
};

// `source` names the input in error messages ("edges.txt:7: ..."). When `peers` is given,
// ids must lie in [0, peers) and a node count in the file must equal it; otherwise there are
// as many peers as the node count says, else max id + 1. Throws std::invalid_argument for a
// malformed line (with its number), a self loop, a count that disagrees or no pairs.
EdgePairs parse_edge_pairs(std::istream& in, const std::string& source,
                           std::optional<int> peers = std::nullopt);
// Throws std::runtime_error when the file cannot be opened.
EdgePairs read_edge_pairs(const std::string& path, std::optional<int> peers = std::nullopt);

// The pairs as undirected edges; also throws std::invalid_argument for an invalid graph.
Graph parse_edge_list(std::istream& in, const std::string& source,
                      std::optional<int> peers = std::nullopt);
Graph read_edge_list(const std::string& path, std::optional<int> peers = std::nullopt);

}  // namespace fastk::topology
