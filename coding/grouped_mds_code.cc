#include "coding/grouped_mds_code.h"

#include <stdexcept>
#include <string>

#include "coding/portable_normal.h"
#include "coding/subsets.h"

namespace fastk::coding {
namespace {

GroupedMdsCode::Draw best_generator(int n, int s, int m, std::uint64_t seed, int candidates) {
  if (n < 1 || s < 0 || m < 1 || candidates < 1) {
    throw std::invalid_argument(
        "grouped MDS code needs n >= 1, s >= 0, m >= 1 and a candidate "
        "seed, got n=" +
        std::to_string(n) + " s=" + std::to_string(s) + " m=" + std::to_string(m) +
        " candidates=" + std::to_string(candidates));
  }
  const int d = s + m;
  if (n % d != 0) {
    throw std::invalid_argument("grouped MDS code needs s+m = " + std::to_string(d) +
                                " to divide n = " + std::to_string(n) +
                                " (members form groups of s+m)");
  }
  GroupedMdsCode::Draw best;
  for (int c = 0; c < candidates; ++c) {
    GroupedMdsCode::Draw draw;
    draw.seed = seed + static_cast<std::uint64_t>(c);
    draw.generator = gaussian_matrix(m, d, draw.seed);
    // Any m members of a group must decode: every m-column subset must be well conditioned.
    draw.worst_condition =
        worst_row_subset_condition(draw.generator.transpose(), m, binomial(d, m), draw.seed);
    // Compared to three digits (subsets.h), so that every build picks the same seed.
    if (c == 0 || three_significant_digits(draw.worst_condition) <
                      three_significant_digits(best.worst_condition)) {
      best = std::move(draw);
    }
  }
  return best;
}

// C[i, j, u] = Gamma[u, position of i in its group] for every partition j of i's group.
Eigen::MatrixXd group_coefficients(int n, int m, const Eigen::MatrixXd& generator) {
  const int d = static_cast<int>(generator.cols());
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(n, Eigen::Index(n) * m);
  for (int i = 0; i < n; ++i) {
    const int group_start = (i / d) * d;
    for (int j = group_start; j < group_start + d; ++j) {
      for (int u = 0; u < m; ++u) c(i, j * m + u) = generator(u, i - group_start);
    }
  }
  return c;
}

}  // namespace

GroupedMdsCode::GroupedMdsCode(int n, int s, int m, std::uint64_t seed, int candidates)
    : GroupedMdsCode(n, s, m, best_generator(n, s, m, seed, candidates)) {}

GroupedMdsCode::GroupedMdsCode(int n, int s, int m, Draw draw)
    : CommunicationEfficientCode(group_coefficients(n, m, draw.generator), n, m, s),
      generator_(std::move(draw.generator)),
      chosen_seed_(draw.seed),
      worst_condition_(draw.worst_condition) {}

std::string GroupedMdsCode::name() const {
  return "grouped_mds(n=" + std::to_string(members()) +
         ",s=" + std::to_string(stragglers_tolerated()) + ",m=" + std::to_string(sub_blocks()) +
         ",seed=" + std::to_string(chosen_seed_) + ")";
}

}  // namespace fastk::coding
