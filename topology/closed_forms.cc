#include "topology/closed_forms.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace fastk::topology {
namespace {

// Largest |(1 + 2 cos(2 pi k / n)) / 3| over k = 1..n-1: k = 1 and k nearest n / 2 are the
// candidates (cos is monotone on [0, pi]).
double ring_lambda(int n) {
  auto eigen = [n](int k) { return (1 + 2 * std::cos(2 * std::numbers::pi * k / n)) / 3; };
  return std::max(std::abs(eigen(1)), std::abs(eigen(n / 2)));
}

// Over (a, b) != (0, 0) of |(1 + 2 cos(2 pi a / r) + 2 cos(2 pi b / c)) / 5|: the largest
// value comes with one index 0 and the other 1; the most negative with both nearest half.
double torus_lambda(int rows, int cols) {
  auto c = [](int k, int n) { return 2 * std::cos(2 * std::numbers::pi * k / n); };
  const double top = (1 + c(0, rows) + c(1, cols)) / 5;
  const double side = (1 + c(1, rows) + c(0, cols)) / 5;
  const double bottom = (1 + c(rows / 2, rows) + c(cols / 2, cols)) / 5;
  return std::max({std::abs(top), std::abs(side), std::abs(bottom)});
}

// Path with weight 1/3 on every edge (metropolis_hastings, max_degree): W = (I + A + E) / 3,
// E the ends' extra self weight, eigenvalues 1/3 + 2/3 cos(pi k / n), k = 0..n-1.
double path_lambda(int n) {
  auto eigen = [n](int k) { return (1 + 2 * std::cos(std::numbers::pi * k / n)) / 3; };
  return std::max(std::abs(eigen(1)), std::abs(eigen(n - 1)));
}

}  // namespace

std::optional<double> closed_form_lambda(const Topology& t) {
  if (t.directed() || t.time_varying() || t.spec.weights == WeightRule::kFile) return std::nullopt;
  const int n = t.graph.size();
  switch (t.spec.kind) {
    case TopologyKind::kRing:
      if (n >= 3) return ring_lambda(n);
      return std::nullopt;
    case TopologyKind::kTorus:
      if (t.spec.rows >= 3 && t.spec.cols >= 3) return torus_lambda(t.spec.rows, t.spec.cols);
      if (std::min(t.spec.rows, t.spec.cols) == 1 && n >= 3) return ring_lambda(n);  // a ring
      return std::nullopt;
    case TopologyKind::kPath:
      if (n >= 3 && t.spec.weights != WeightRule::kUniform) return path_lambda(n);
      return std::nullopt;
    case TopologyKind::kHypercube: {
      const int d = t.graph.max_degree();
      if (d >= 1) return static_cast<double>(d - 1) / (d + 1);
      return std::nullopt;
    }
    case TopologyKind::kComplete:
      return 0.0;
    case TopologyKind::kGrid:
    case TopologyKind::kStar:
    case TopologyKind::kExponential:
    case TopologyKind::kRandomRegular:
    case TopologyKind::kErdosRenyi:
    case TopologyKind::kWattsStrogatz:
    case TopologyKind::kEdgeList:
    case TopologyKind::kOnePeerExponential:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int> closed_form_diameter(const Topology& t) {
  if (t.directed()) return std::nullopt;
  const int n = t.graph.size();
  if (n <= 2) return n - 1;
  switch (t.spec.kind) {
    case TopologyKind::kRing:
      return n / 2;
    case TopologyKind::kPath:
      return n - 1;
    case TopologyKind::kTorus:
      return t.spec.rows / 2 + t.spec.cols / 2;
    case TopologyKind::kGrid:
      return t.spec.rows + t.spec.cols - 2;
    case TopologyKind::kHypercube:
      return t.graph.max_degree();
    case TopologyKind::kComplete:
      return 1;
    case TopologyKind::kStar:
      return 2;
    case TopologyKind::kExponential:
    case TopologyKind::kRandomRegular:
    case TopologyKind::kErdosRenyi:
    case TopologyKind::kWattsStrogatz:
    case TopologyKind::kEdgeList:
    case TopologyKind::kOnePeerExponential:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace fastk::topology
