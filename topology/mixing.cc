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

namespace {

// W_ij for a neighbour j of i under `rule` (not kFile).
double rule_weight(const Graph& graph, WeightRule rule, PeerId i, PeerId j, int max_degree) {
  switch (rule) {
    case WeightRule::kMetropolisHastings:
      return 1.0 / (1 + std::max(graph.degree(i), graph.degree(j)));
    case WeightRule::kMaxDegree:
      return 1.0 / (1 + max_degree);
    case WeightRule::kUniform:
      return 1.0 / (1 + graph.degree(i));
    case WeightRule::kFile:
      break;
  }
  throw std::invalid_argument("weight rule 'file' needs a matrix file (weights_file)");
}

}  // namespace

MixingMatrix mixing_matrix(const Graph& graph, WeightRule rule) {
  const int n = graph.size();
  const int max_degree = graph.max_degree();
  MixingMatrix w(n, n);
  std::vector<int> per_row(static_cast<std::size_t>(n));
  for (PeerId i = 0; i < n; ++i) per_row[static_cast<std::size_t>(i)] = graph.degree(i) + 1;
  w.reserve(per_row);
  for (PeerId i = 0; i < n; ++i) {
    // Summed in ascending j from 0, as the dense row sum of earlier versions added them (its
    // zeros changed nothing), so every self weight keeps its bits.
    double others = 0;
    for (PeerId j : graph.neighbors(i)) {
      const double weight = rule_weight(graph, rule, i, j, max_degree);
      w.insert(i, j) = weight;
      others += weight;
    }
    w.insert(i, i) = 1.0 - others;
  }
  w.makeCompressed();
  return w;
}

Eigen::MatrixXd dense(const MixingMatrix& w) { return Eigen::MatrixXd(w); }

MixingMatrix parse_weight_matrix(std::istream& in, const std::string& source, int peers) {
  std::vector<Eigen::Triplet<double>> entries;
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
      if (col < peers && value != 0.0) entries.emplace_back(row, col, value);
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
  MixingMatrix w(peers, peers);
  w.setFromTriplets(entries.begin(), entries.end());
  return w;
}

MixingMatrix read_weight_matrix(const std::string& path, int peers) {
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

std::string pair_text(int i, int j) {
  return "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
}

// One stored entry W_ij = value: its sign, whether i and j are neighbours, its mirror W_ji.
void check_entry(const MixingMatrix& w, const Graph& graph, int i, int j, double value,
                 double tolerance, MixingCheck& check) {
  if (value < -tolerance && check.nonnegative) {
    check.nonnegative = false;
    check.errors.push_back("entry " + pair_text(i, j) + " is negative: " + precise(value));
  }
  if (i != j && std::abs(value) > tolerance && !graph.has_edge(i, j) && check.respects_graph) {
    check.respects_graph = false;
    check.errors.push_back("entry " + pair_text(i, j) + " = " + precise(value) + " but peers " +
                           std::to_string(i) + " and " + std::to_string(j) + " are not neighbours");
  }
  if (std::abs(value - w.coeff(j, i)) > tolerance) check.symmetric = false;
}

}  // namespace

MixingCheck check_mixing(const MixingMatrix& w, const Graph& graph, double tolerance,
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
  std::optional<std::pair<int, double>> off_row, off_column;  // the first not summing to 1
  std::vector<double> column_sums(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    double row_sum = 0;
    for (MixingMatrix::InnerIterator it(w, i); it; ++it) {
      const int j = static_cast<int>(it.col());
      const double value = it.value();
      row_sum += value;
      column_sums[static_cast<std::size_t>(j)] += value;
      check_entry(w, graph, i, j, value, tolerance, check);
    }
    if (std::abs(row_sum - 1.0) > tolerance && !off_row) off_row = {i, row_sum};
  }
  for (int j = 0; j < n; ++j) {
    const double sum = column_sums[static_cast<std::size_t>(j)];
    if (std::abs(sum - 1.0) > tolerance) {
      off_column = {j, sum};
      break;
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
