#include "topology/edge_list.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "topology/text_lines.h"

namespace fastk::topology {

EdgePairs parse_edge_pairs(std::istream& in, const std::string& source, std::optional<int> peers) {
  std::vector<Edge> edges;
  int max_id = -1;
  for_each_data_line(in, source, [&](const std::string& line, const std::string& where) {
    std::istringstream fields(line);
    long long a = 0, b = 0;
    std::string extra;
    if (!(fields >> a >> b) || (fields >> extra)) {
      throw std::invalid_argument(where + ": expected two peer ids 'a b', got '" + printable(line) +
                                  "'");
    }
    if (a < 0 || b < 0 || a > 1'000'000 || b > 1'000'000) {
      throw std::invalid_argument(where + ": peer ids must be in 0..1000000, got '" +
                                  printable(line) + "'");
    }
    if (peers && (a >= *peers || b >= *peers)) {
      throw std::invalid_argument(where + ": peer id out of range 0.." +
                                  std::to_string(*peers - 1) + " in '" + printable(line) + "'");
    }
    if (a == b) throw std::invalid_argument(where + ": self loop '" + printable(line) + "'");
    edges.push_back({static_cast<PeerId>(a), static_cast<PeerId>(b)});
    max_id = std::max(max_id, static_cast<int>(std::max(a, b)));
  });
  if (edges.empty() && !peers) throw std::invalid_argument(source + ": no edges");
  return {peers.value_or(max_id + 1), std::move(edges)};
}

EdgePairs read_edge_pairs(const std::string& path, std::optional<int> peers) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open edge-list file '" + path + "'");
  return parse_edge_pairs(in, path, peers);
}

namespace {

Graph as_graph(EdgePairs edges, const std::string& source) {
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
