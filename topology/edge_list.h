// Reading graphs from edge-list files: one "a b" pair of peer ids per line; '#' starts a
// comment; blank lines are ignored.
#pragma once

#include <istream>
#include <optional>
#include <string>

#include "topology/graph.h"

namespace fastk::topology {

// `source` names the input in error messages ("edges.txt:7: ..."). When `peers` is given,
// ids must lie in [0, peers); otherwise the graph has max id + 1 peers.
// Throws std::invalid_argument for a malformed line (with its number) or an invalid graph.
Graph parse_edge_list(std::istream& in, const std::string& source,
                      std::optional<int> peers = std::nullopt);
// Throws std::runtime_error when the file cannot be opened.
Graph read_edge_list(const std::string& path, std::optional<int> peers = std::nullopt);

}  // namespace fastk::topology
