#include "coding/stochastic_block_code.h"

#include <random>
#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

Eigen::MatrixXd block_model_matrix(int n, int k, int c, double p_in, double p_out,
                                   std::uint64_t seed) {
  const bool probabilities = p_in > 0.0 && p_in <= 1.0 && p_out >= 0.0 && p_out <= 1.0;
  if (n < 1 || k < 1 || c < 1 || c > n || c > k || !probabilities) {
    throw std::invalid_argument(
        "stochastic block code needs n, k >= 1, 1 <= communities <= min(n, k), p_in in (0, 1] "
        "and p_out in [0, 1], got n=" +
        std::to_string(n) + " k=" + std::to_string(k) + " communities=" + std::to_string(c) +
        " p_in=" + std::to_string(p_in) + " p_out=" + std::to_string(p_out));
  }
  // mt19937_64's bits, not a distribution: the same matrix from every standard library.
  std::mt19937_64 rng(seed);
  Eigen::MatrixXd b(n, k);
  for (int i = 0; i < n; ++i) {
    const int home = StochasticBlockCode::community(i, n, c);
    for (int j = 0; j < k; ++j) {
      const double p = StochasticBlockCode::community(j, k, c) == home ? p_in : p_out;
      b(i, j) = double(rng() >> 11) * 0x1.0p-53 < p ? 1.0 : 0.0;
    }
  }
  return b;
}

}  // namespace

StochasticBlockCode::StochasticBlockCode(int n, int k, int communities, double p_in, double p_out,
                                         std::uint64_t seed)
    : GradientCode(block_model_matrix(n, k, communities, p_in, p_out, seed)),
      communities_(communities),
      p_in_(p_in),
      p_out_(p_out),
      seed_(seed) {}

int StochasticBlockCode::community(int index, int count, int communities) {
  // Contiguous runs whose sizes differ by at most one.
  return static_cast<int>(static_cast<long long>(index) * communities / count);
}

std::string StochasticBlockCode::name() const {
  return "sbc(n=" + std::to_string(members()) + ",k=" + std::to_string(partitions()) +
         ",c=" + std::to_string(communities_) + ",p_in=" + std::to_string(p_in_) +
         ",p_out=" + std::to_string(p_out_) + ",seed=" + std::to_string(seed_) + ")";
}

}  // namespace fastk::coding
