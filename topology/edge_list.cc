#include "topology/edge_list.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "topology/text_lines.h"

namespace fastk::topology {

namespace {

constexpr long long kMaxId = kMaxPeers - 1;

// The node count of a decentralizepy first line ("16"), or nullopt when `line` is not one
// integer alone. Throws for a count no graph can have.
std::optional<int> node_count(const std::string& line, const std::string& where,
                              std::optional<int> peers) {
  std::istringstream fields(line);
  long long count = 0;
  std::string extra;
  if (!(fields >> count) || (fields >> extra)) return std::nullopt;
  if (count < 1 || count > kMaxId + 1) {
    throw std::invalid_argument(where + ": a node count must be in 1.." +
                                std::to_string(kMaxId + 1) + ", got '" + printable(line) + "'");
  }
  if (peers && count != *peers) {
    throw std::invalid_argument(where + ": the file declares " + std::to_string(count) +
                                " nodes on its first line, but " + std::to_string(*peers) +
                                " peers were asked for (topology.peers)");
  }
  return static_cast<int>(count);
}

}  // namespace

EdgePairs parse_edge_pairs(std::istream& in, const std::string& source, std::optional<int> peers) {
  EdgePairs result;
  int max_id = -1;
  bool first = true;
  for_each_data_line(in, source, [&](const std::string& line, const std::string& where) {
    if (std::exchange(first, false)) {
      if (const auto count = node_count(line, where, peers)) {
        peers = count;
        result.counted = true;
        return;
      }
    }
    std::istringstream fields(line);
    long long a = 0, b = 0;
    std::string extra;
    if (!(fields >> a >> b) || (fields >> extra)) {
      throw std::invalid_argument(where + ": expected two peer ids 'a b', got '" + printable(line) +
                                  "'");
    }
    if (a < 0 || b < 0 || a > kMaxId || b > kMaxId) {
      throw std::invalid_argument(where + ": peer ids must be in 0.." + std::to_string(kMaxId) +
                                  ", got '" + printable(line) + "'");
    }
    if (static_cast<std::int64_t>(result.pairs.size()) >= kMaxEdges) {
      throw std::invalid_argument(where + ": more than " + std::to_string(kMaxEdges) +
                                  " edges; fastk reads graphs of at most that many");
    }
    if (peers && (a >= *peers || b >= *peers)) {
      throw std::invalid_argument(
          where + ": peer id out of range 0.." + std::to_string(*peers - 1) + " in '" +
          printable(line) + "'" +
          (result.counted ? " (the first line declares " + std::to_string(*peers) + " nodes)"
                          : std::string()));
    }
    if (a == b) throw std::invalid_argument(where + ": self loop '" + printable(line) + "'");
    result.pairs.push_back({static_cast<PeerId>(a), static_cast<PeerId>(b)});
    max_id = std::max(max_id, static_cast<int>(std::max(a, b)));
  });
  if (result.pairs.empty() && !peers) throw std::invalid_argument(source + ": no edges");
  result.peers = peers.value_or(max_id + 1);
  return result;
}

EdgePairs read_edge_pairs(const std::string& path, std::optional<int> peers) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open edge-list file '" + path + "'");
  return parse_edge_pairs(in, path, peers);
}

namespace {

Graph as_graph(EdgePairs edges, const std::string& source) {
  if (edges.counted) {  // decentralizepy writes "a b" and "b a": one undirected edge
    std::set<std::pair<PeerId, PeerId>> seen;
    std::erase_if(edges.pairs,
                  [&seen](const Edge& e) { return !seen.insert(std::minmax(e.a, e.b)).second; });
  }
  try {
    return Graph(edges.peers, std::move(edges.pairs));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
}

}  // namespace

Graph parse_edge_list(std::istream& in, const std::string& source, std::optional<int> peers) {
  return as_graph(parse_edge_pairs(in, source, peers), source);
}

Graph read_edge_list(const std::string& path, std::optional<int> peers) {
  return as_graph(read_edge_pairs(path, peers), path);
}

}  // namespace fastk::topology
