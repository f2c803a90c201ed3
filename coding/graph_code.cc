#include "coding/graph_code.h"

#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

Eigen::MatrixXd edge_incidence(int vertices, const std::vector<std::pair<int, int>>& edges) {
  if (vertices < 1) throw std::invalid_argument("a graph code needs at least one vertex");
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(Eigen::Index(edges.size()), vertices);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto [u, v] = edges[i];
    if (u < 0 || u >= vertices || v < 0 || v >= vertices || u == v) {
      throw std::invalid_argument("graph code edge " + std::to_string(i) + " (" +
                                  std::to_string(u) + ", " + std::to_string(v) +
                                  ") needs two distinct endpoints in [0, " +
                                  std::to_string(vertices) + ")");
    }
    b(Eigen::Index(i), u) = 1.0;
    b(Eigen::Index(i), v) = 1.0;
  }
  return b;
}

}  // namespace

GraphCode::GraphCode(int vertices, const std::vector<std::pair<int, int>>& edges)
    : GradientCode(edge_incidence(vertices, edges)) {}

std::string GraphCode::name() const {
  return "graph(blocks=" + std::to_string(partitions()) + ",edges=" + std::to_string(members()) +
         ")";
}

}  // namespace fastk::coding
