// Enumerating arrival patterns: exact codes promise to decode from *every* subset of a given
// size, so construction (seed selection) and tests check all of them when that is affordable.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "third_party/eigen.h"

namespace fastk::coding {

// C(n, r), saturating at UINT64_MAX; 0 when r < 0 or r > n.
std::uint64_t binomial(int n, int r);

// Calls visit for every size-`size` subset of {0..n-1}, ascending, in lexicographic order.
void for_each_subset(int n, int size, const std::function<void(std::span<const int>)>& visit);

// sigma_max / sigma_min over the min(rows, cols) singular values; infinity when singular.
double condition_number(const Eigen::MatrixXd& m);

// x to three significant digits (non-finite values unchanged), for choosing among random draws
// by a figure such as a condition number: every peer must pick the same draw, also where its
// build rounds the linear algebra differently, so draws are compared on this, ties going to
// the lower seed; only a figure within round-off of a rounding boundary could still split them.
double three_significant_digits(double x);

// The rows of m listed in `rows`, in that order.
Eigen::MatrixXd select_rows(const Eigen::MatrixXd& m, std::span<const int> rows);

// The largest condition number of m's row subsets of the given size: all of them when there
// are at most max_subsets, otherwise max_subsets uniformly drawn ones (seeded, deterministic).
double worst_row_subset_condition(const Eigen::MatrixXd& m, int size, std::uint64_t max_subsets,
                                  std::uint64_t seed);

}  // namespace fastk::coding
