#include "topology/mixing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "topology/text_lines.h"

namespace fastk::topology {

WeightRule parse_weight_rule(const std::string& name) {
  if (name == "metropolis_hastings") return WeightRule::kMetropolisHastings;
  if (name == "max_degree") return WeightRule::kMaxDegree;
  if (name == "uniform") return WeightRule::kUniform;
  if (name == "file") return WeightRule::kFile;
  throw std::invalid_argument("unknown weight rule '" + name +
                              "', expected one of metropolis_hastings, max_degree, uniform, file");
}

std::string to_string(WeightRule rule) {
  switch (rule) {
    case WeightRule::kMetropolisHastings:
      return "metropolis_hastings";
    case WeightRule::kMaxDegree:
      return "max_degree";
    case WeightRule::kUniform:
      return "uniform";
    case WeightRule::kFile:
      return "file";
  }
  return "?";
}

Eigen::MatrixXd mixing_matrix(const Graph& graph, WeightRule rule) {
  const int n = graph.size();
  const int max_degree = graph.max_degree();
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(n, n);
  for (PeerId i = 0; i < n; ++i) {
    for (PeerId j : graph.neighbors(i)) {
      switch (rule) {
        case WeightRule::kMetropolisHastings:
          w(i, j) = 1.0 / (1 + std::max(graph.degree(i), graph.degree(j)));
          break;
        case WeightRule::kMaxDegree:
          w(i, j) = 1.0 / (1 + max_degree);
          break;
        case WeightRule::kUniform:
          w(i, j) = 1.0 / (1 + graph.degree(i));
          break;
        case WeightRule::kFile:
          throw std::invalid_argument("weight rule 'file' needs a matrix file (weights_file)");
      }
    }
    w(i, i) = 1.0 - w.row(i).sum();
  }
  return w;
}

Eigen::MatrixXd parse_weight_matrix(std::istream& in, const std::string& source, int peers) {
  Eigen::MatrixXd w(peers, peers);
  int row = 0;
  for_each_data_line(in, source, [&](const std::string& line, const std::string& where) {
    if (row >= peers) {
      throw std::invalid_argument(where + ": more than " + std::to_string(peers) + " rows for a " +
                                  std::to_string(peers) + "-peer graph");
    }
    std::istringstream fields(line);
    int col = 0;
    std::string token;
    while (fields >> token) {
      char* end = nullptr;
      double value = std::strtod(token.c_str(), &end);
      if (end != token.c_str() + token.size() || !std::isfinite(value)) {
        throw std::invalid_argument(where + ": '" + printable(token) + "' is not a finite number");
      }
      if (col < peers) w(row, col) = value;
      ++col;
    }
    if (col != peers) {
      throw std::invalid_argument(where + ": expected " + std::to_string(peers) +
                                  " numbers in row " + std::to_string(row));
    }
    ++row;
  });
  if (row != peers) {
    throw std::invalid_argument(source + ": expected " + std::to_string(peers) + " rows, found " +
                                std::to_string(row));
  }
  return w;
}

Eigen::MatrixXd read_weight_matrix(const std::string& path, int peers) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open weight-matrix file '" + path + "'");
  return parse_weight_matrix(in, path, peers);
}

namespace {

// Enough digits to see how far from 1 a sum is (std::to_string's 6 decimals showed
// 0.99999999 as "1.000000").
std::string precise(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

}  // namespace

MixingCheck check_mixing(const Eigen::MatrixXd& w, const Graph& graph, double tolerance,
                         Stochastic needed) {
  MixingCheck check;
  const int n = graph.size();
  if (w.rows() != n || w.cols() != n) {
    check.row_stochastic = check.column_stochastic = check.symmetric = check.respects_graph = false;
    check.errors.push_back("matrix is " + std::to_string(w.rows()) + "x" +
                           std::to_string(w.cols()) + " but the graph has " + std::to_string(n) +
                           " peers");
    return check;
  }
  auto pair = [](int i, int j) { return "(" + std::to_string(i) + ", " + std::to_string(j) + ")"; };
  std::optional<std::pair<int, double>> off_row, off_column;  // the first not summing to 1
  for (int i = 0; i < n; ++i) {
    const double row_sum = w.row(i).sum(), column_sum = w.col(i).sum();
    if (std::abs(row_sum - 1.0) > tolerance && !off_row) off_row = {i, row_sum};
    if (std::abs(column_sum - 1.0) > tolerance && !off_column) off_column = {i, column_sum};
    for (int j = 0; j < n; ++j) {
      if (w(i, j) < -tolerance && check.nonnegative) {
        check.nonnegative = false;
        check.errors.push_back("entry " + pair(i, j) + " is negative: " + precise(w(i, j)));
      }
      if (i != j && std::abs(w(i, j)) > tolerance && !graph.has_edge(i, j) &&
          check.respects_graph) {
        check.respects_graph = false;
        check.errors.push_back("entry " + pair(i, j) + " = " + precise(w(i, j)) + " but peers " +
                               std::to_string(i) + " and " + std::to_string(j) +
                               " are not neighbours");
      }
      if (std::abs(w(i, j) - w(j, i)) > tolerance) check.symmetric = false;
    }
  }
  check.row_stochastic = !off_row;
  check.column_stochastic = !off_column;
  auto sums = [](const char* what, const std::pair<int, double>& off) {
    return std::string(what) + " " + std::to_string(off.first) + " sums to " + precise(off.second) +
           ", not 1";
  };
  if (needed == Stochastic::kColumns) {
    // Push-sum: each sender splits its whole mass, so columns must sum to 1; rows need not.
    if (off_column) {
      check.errors.push_back(sums("column", *off_column) + " (not column-stochastic)");
    }
    return check;
  }
  if (off_row) check.errors.push_back(sums("row", *off_row) + " (not row-stochastic)");
  // What decides the limit is the column sums, not symmetry: with every column summing to 1
  // (doubly stochastic, symmetric or not) averaging keeps the plain mean of the models.
  if (!off_row && off_column) {
    check.warnings.push_back("not column-stochastic (" + sums("column", *off_column) +
                             "): peers converge to a weighted average of their models, not "
                             "the plain mean");
  }
  return check;
}

}  // namespace fastk::topology
