#include "coding/subsets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>

namespace fastk::coding {

std::uint64_t binomial(int n, int r) {
  if (r < 0 || r > n) return 0;
  r = std::min(r, n - r);
  std::uint64_t c = 1;
  for (int i = 1; i <= r; ++i) {
    // c * (n - r + i) / i stays exact because c is C(n - r + i - 1, i - 1).
    const std::uint64_t factor = static_cast<std::uint64_t>(n - r + i);
    if (c > std::numeric_limits<std::uint64_t>::max() / factor) {
      return std::numeric_limits<std::uint64_t>::max();
    }
    c = c * factor / static_cast<std::uint64_t>(i);
  }
  return c;
}

void for_each_subset(int n, int size, const std::function<void(std::span<const int>)>& visit) {
  if (size < 0 || size > n) return;
  std::vector<int> subset(size);
  std::iota(subset.begin(), subset.end(), 0);
  while (true) {
    visit(subset);
    // Advance the rightmost index that can still move right, then reset the ones after it.
    int i = size - 1;
    while (i >= 0 && subset[i] == n - size + i) --i;
    if (i < 0) return;
    ++subset[i];
    for (int j = i + 1; j < size; ++j) subset[j] = subset[j - 1] + 1;
  }
}

double condition_number(const Eigen::MatrixXd& m) {
  if (m.size() == 0) return 1.0;
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(m).singularValues();
  const double smallest = sv(sv.size() - 1);
  if (!(smallest > 0.0)) return std::numeric_limits<double>::infinity();
  return sv(0) / smallest;
}

Eigen::MatrixXd select_rows(const Eigen::MatrixXd& m, std::span<const int> rows) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), m.cols());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out.row(static_cast<Eigen::Index>(r)) = m.row(rows[r]);
  }
  return out;
}

double worst_row_subset_condition(const Eigen::MatrixXd& m, int size, std::uint64_t max_subsets,
                                  std::uint64_t seed) {
  const int n = static_cast<int>(m.rows());
  double worst = 0.0;
  const auto check = [&](std::span<const int> rows) {
    worst = std::max(worst, condition_number(select_rows(m, rows)));
  };
  if (binomial(n, size) <= max_subsets) {
    for_each_subset(n, size, check);
    return worst;
  }
  std::mt19937_64 rng(seed);
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (std::uint64_t t = 0; t < max_subsets; ++t) {
    // Partial Fisher-Yates with explicit index arithmetic: the same draw on every library.
    for (int i = 0; i < size; ++i) {
      const int j = i + static_cast<int>(rng() % static_cast<std::uint64_t>(n - i));
      std::swap(all[i], all[j]);
    }
    std::vector<int> rows(all.begin(), all.begin() + size);
    std::sort(rows.begin(), rows.end());
    check(rows);
  }
  return worst;
}

double three_significant_digits(double x) {
  if (!std::isfinite(x)) return x;
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", x);
  return std::strtod(text, nullptr);
}

}  // namespace fastk::coding
