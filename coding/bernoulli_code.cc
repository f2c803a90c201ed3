#include "coding/bernoulli_code.h"

#include <random>
#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

Eigen::MatrixXd bernoulli_matrix(int n, int k, double d, std::uint64_t seed) {
  if (n < 1 || k < 1 || !(d > 0.0 && d <= k)) {
    throw std::invalid_argument(
        "Bernoulli code needs n >= 1, k >= 1 and a load d in (0, k], got "
        "n=" +
        std::to_string(n) + " k=" + std::to_string(k) + " d=" + std::to_string(d));
  }
  std::mt19937_64 rng(seed);
  const double p = d / k;
  Eigen::MatrixXd b(n, k);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) b(i, j) = double(rng() >> 11) * 0x1.0p-53 < p ? 1.0 : 0.0;
  }
  return b;
}

}  // namespace

BernoulliCode::BernoulliCode(int n, int k, double d, std::uint64_t seed)
    : GradientCode(bernoulli_matrix(n, k, d, seed)), d_(d), seed_(seed) {}

std::string BernoulliCode::name() const {
  return "bgc(n=" + std::to_string(members()) + ",k=" + std::to_string(partitions()) +
         ",d=" + std::to_string(d_) + ",seed=" + std::to_string(seed_) + ")";
}

Decoding BernoulliCode::decode_one_step(std::span<const int> arrived) const {
  const double a = arrived.empty() ? 0.0 : partitions() / (double(arrived.size()) * d_);
  return evaluate_decoding(arrived_rows(arrived), std::vector<double>(arrived.size(), a),
                           tolerance());
}

}  // namespace fastk::coding
