#include "coding/cyclic_mds_code.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "coding/portable_normal.h"

namespace fastk::coding {
namespace {

bool holds(int member, int partition, int n, int d) {
  // Member i holds i..i+d-1 (mod n), i.e. partition j is held by j-d+1..j.
  return ((partition - member) % n + n) % n < d;
}

CyclicMdsCode::Construction construct(int n, int s, int m, std::uint64_t seed) {
  if (n < 1 || s < 0 || m < 1 || s + m > n) {
    throw std::invalid_argument(
        "cyclic MDS code needs n >= 1, s >= 0, m >= 1 and s+m <= n, got "
        "n=" +
        std::to_string(n) + " s=" + std::to_string(s) + " m=" + std::to_string(m));
  }
  const int d = s + m;
  const int k = n - s;  // dimension of the generator
  CyclicMdsCode::Construction result;
  result.generator = gaussian_matrix(k, n, seed);
  result.coefficients = Eigen::MatrixXd::Zero(n, Eigen::Index(n) * m);
  for (int j = 0; j < n; ++j) {
    // x^T G[:, i] = 0 for the n - d members that do not hold j, and x_u' = delta(u, u') for
    // the first m coordinates: n - d + m = k equations in k unknowns.
    Eigen::MatrixXd system = Eigen::MatrixXd::Zero(k, k);
    int row = 0;
    for (int i = 0; i < n; ++i) {
      if (!holds(i, j, n, d)) system.row(row++) = result.generator.col(i).transpose();
    }
    for (int u = 0; u < m; ++u) system(row++, u) = 1.0;
    const Eigen::FullPivLU<Eigen::MatrixXd> lu(system);
    if (!lu.isInvertible()) {
      throw std::invalid_argument("cyclic MDS code: the weight system of partition " +
                                  std::to_string(j) + " is singular for seed " +
                                  std::to_string(seed) + "; use another seed");
    }
    for (int u = 0; u < m; ++u) {
      Eigen::VectorXd rhs = Eigen::VectorXd::Zero(k);
      rhs(n - d + u) = 1.0;
      const Eigen::VectorXd x = lu.solve(rhs);
      const Eigen::VectorXd weights = result.generator.transpose() * x;  // one per member
      for (int i = 0; i < n; ++i) {
        if (holds(i, j, n, d)) {
          result.coefficients(i, j * m + u) = weights(i);
        } else {
          result.max_off_support_weight =
              std::max(result.max_off_support_weight, std::abs(weights(i)));
        }
      }
    }
  }
  return result;
}

}  // namespace

CyclicMdsCode::CyclicMdsCode(int n, int s, int m, std::uint64_t seed)
    : CyclicMdsCode(n, s, m, seed, construct(n, s, m, seed)) {}

CyclicMdsCode::CyclicMdsCode(int n, int s, int m, std::uint64_t seed, Construction construction)
    : CommunicationEfficientCode(std::move(construction.coefficients), n, m, s),
      generator_(std::move(construction.generator)),
      seed_(seed),
      max_off_support_weight_(construction.max_off_support_weight) {}

std::string CyclicMdsCode::name() const {
  return "cyclic_mds(n=" + std::to_string(members()) +
         ",s=" + std::to_string(stragglers_tolerated()) + ",m=" + std::to_string(sub_blocks()) +
         ",seed=" + std::to_string(seed_) + ")";
}

}  // namespace fastk::coding
