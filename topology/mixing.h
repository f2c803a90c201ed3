// Mixing (gossip) weight matrices W for a graph, and their validation.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "third_party/eigen_sparse.h"
#include "topology/graph.h"

namespace fastk::topology {

enum class WeightRule {
  kMetropolisHastings,  // W_ij = 1 / (1 + max(d_i, d_j)); symmetric, doubly stochastic
  kMaxDegree,           // W_ij = 1 / (1 + max_k d_k); symmetric, doubly stochastic
  kUniform,             // W_ij = 1 / (1 + d_i); symmetric only on regular graphs
  kFile,                // an explicit matrix read from a file
};

// A mixing matrix W, stored sparse: row i holds W_ii and W_ij for i's neighbours, so it is
// degree-sized per peer (a dense n x n matrix was 80 GB at 100,000 peers). Row-major, as the
// protocol reads a peer's own row.
using MixingMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// "metropolis_hastings", "max_degree", "uniform", "file"; throws std::invalid_argument.
WeightRule parse_weight_rule(const std::string& name);
std::string to_string(WeightRule rule);

// Builds W for a rule other than kFile. Self weights take the remaining mass of each row.
MixingMatrix mixing_matrix(const Graph& graph, WeightRule rule);

// Reads an n x n matrix: n lines of n numbers, '#' comments and blank lines allowed; keeps
// the non-zero entries. Throws std::invalid_argument (with file:line) for malformed rows and
// std::runtime_error when the file cannot be opened. Validation against a graph is separate
// (check_mixing).
MixingMatrix parse_weight_matrix(std::istream& in, const std::string& source, int peers);
MixingMatrix read_weight_matrix(const std::string& path, int peers);

// The dense form, for tests and reports of small graphs.
Eigen::MatrixXd dense(const MixingMatrix& w);

// What a matrix satisfies. `errors` make it unusable for gossip on this graph (negative
// entries, rows not summing to one, weight on a pair that is not an edge); `warnings` are
// facts a user should know (columns not summing to one: the peers then converge to a weighted
// average rather than the plain mean). Symmetry is reported but is no warning: a doubly
// stochastic matrix keeps the mean whether or not it is symmetric.
struct MixingCheck {
  bool row_stochastic = true;
  bool column_stochastic = true;
  bool symmetric = true;
  bool nonnegative = true;
  bool respects_graph = true;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  bool usable() const { return errors.empty(); }
};
// Which sums a gossip rule needs to be 1: the rows of W for plain averaging (a peer's own
// weights), the columns for push-sum on a directed graph (a sender's shares).
enum class Stochastic { kRows, kColumns };
// O(entries of W) time: every check reads only the stored (non-zero) entries.
MixingCheck check_mixing(const MixingMatrix& w, const Graph& graph, double tolerance = 1e-9,
                         Stochastic needed = Stochastic::kRows);

// A weights file (weights = "file") may have rows and columns that sum to 1 within this, so a
// matrix written by hand with 6 decimals (1/3 as 0.333333) is accepted; `fastk topo --matrix`
// prints W with every digit, so its output reads back exactly.
inline constexpr double kWeightsFileTolerance = 1e-5;

}  // namespace fastk::topology
