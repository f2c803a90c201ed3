// Weights of one mixing row when peer i combines only the subset S of its neighbours that
// it actually used (docs/protocol.md §4). Every rule gives a row that sums to one.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace fastk::consensus {

enum class Renormalisation {
  kReturnToSelf,  // w_ij = W_ij on S, w_ii = 1 - sum_S W_ij: using all gives W exactly
  kUniform,       // w_ij = 1 / (|S| + 1) on S and i
  kProportional,  // w_ij = W_ij / (W_ii + sum_S W_il) on S and i
};

// "return_to_self", "uniform", "proportional"; throws std::invalid_argument otherwise.
Renormalisation parse_renormalisation(const std::string& name);
std::string to_string(Renormalisation rule);

struct SubsetRow {
  double self_weight = 1.0;
  std::vector<double> weights;  // aligned with the `used` indices given
};

// `base_weights` are W_ij for the round's receive_from list, `base_self` is W_ii, `used`
// indexes into receive_from.
SubsetRow subset_row(std::span<const double> base_weights, double base_self,
                     std::span<const int> used, Renormalisation rule);

}  // namespace fastk::consensus
