#include "coding/decoding.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

void check_arguments(const Eigen::MatrixXd& b_s, const Eigen::VectorXd& target, double tolerance) {
  if (b_s.cols() == 0) {
    throw std::invalid_argument(
        "decoding needs an encoding matrix with at least one partition (b_s has no columns)");
  }
  if (target.size() != b_s.cols()) {
    throw std::invalid_argument("decoding target has " + std::to_string(target.size()) +
                                " entries for " + std::to_string(b_s.cols()) +
                                " partitions; it needs one per partition");
  }
  if (!(tolerance > 0.0)) {
    throw std::invalid_argument("decoding tolerance must be positive, got " +
                                std::to_string(tolerance));
  }
}

}  // namespace

Decoding evaluate_decoding_to(const Eigen::MatrixXd& b_s, const Eigen::VectorXd& target,
                              std::vector<double> coefficients, double tolerance) {
  check_arguments(b_s, target, tolerance);
  if (static_cast<Eigen::Index>(coefficients.size()) != b_s.rows()) {
    throw std::invalid_argument("decoding has " + std::to_string(coefficients.size()) +
                                " coefficients for " + std::to_string(b_s.rows()) +
                                " arrived rows; it needs one per row");
  }
  const Eigen::Map<const Eigen::VectorXd> a(coefficients.data(), b_s.rows());
  const Eigen::VectorXd alpha =
      b_s.rows() == 0 ? Eigen::VectorXd::Zero(b_s.cols()) : Eigen::VectorXd(b_s.transpose() * a);
  const Eigen::VectorXd gap = alpha - target;

  Decoding d;
  d.residual = gap.cwiseAbs().maxCoeff();
  d.error = gap.squaredNorm();
  const double scale = target.cwiseAbs().sum();
  d.amplification = b_s.rows() == 0 || scale == 0.0
                        ? 0.0
                        : a.cwiseAbs().dot(b_s.cwiseAbs().rowwise().sum()) / scale;
  // A NaN residual (from a singular solve or NaN input) compares false, so it is never
  // reported as decodable.
  d.decodable = d.residual < tolerance;
  d.alpha.assign(alpha.data(), alpha.data() + alpha.size());
  d.coefficients = std::move(coefficients);
  return d;
}

Decoding evaluate_decoding(const Eigen::MatrixXd& b_s, std::vector<double> coefficients,
                           double tolerance) {
  return evaluate_decoding_to(b_s, Eigen::VectorXd::Ones(b_s.cols()), std::move(coefficients),
                              tolerance);
}

Decoding decode_least_squares_to(const Eigen::MatrixXd& b_s, const Eigen::VectorXd& target,
                                 double tolerance) {
  check_arguments(b_s, target, tolerance);
  if (b_s.rows() == 0) return evaluate_decoding_to(b_s, target, {}, tolerance);
  // The complete orthogonal decomposition gives the minimum-norm least-squares solution even
  // when B_S is rank deficient. Its default rank threshold scales with the matrix size and
  // machine epsilon, so a near-duplicate row could count as independent and get coefficients
  // of 1e12; the explicit threshold makes the rank, and so a, a documented property.
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> qr(b_s.cols(), b_s.rows());
  qr.setThreshold(kDecodingRankThreshold);
  qr.compute(b_s.transpose());
  const Eigen::VectorXd a = qr.solve(target);
  return evaluate_decoding_to(b_s, target, std::vector<double>(a.data(), a.data() + a.size()),
                              tolerance);
}

Decoding decode_least_squares(const Eigen::MatrixXd& b_s, double tolerance) {
  return decode_least_squares_to(b_s, Eigen::VectorXd::Ones(b_s.cols()), tolerance);
}

}  // namespace fastk::coding
