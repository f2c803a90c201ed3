// What a decoder tells the aggregator: the coefficients it applies to the arrived messages and
// how far their combination is from the exact sum of all partitions (docs/coding.md §1.2-1.5).
#pragma once

#include <vector>

#include "third_party/eigen.h"

namespace fastk::coding {

struct Decoding {
  bool decodable = false;            // residual < tolerance
  std::vector<double> coefficients;  // a: one per row of b_s, in row order (zeros allowed)
  std::vector<double> alpha;         // B_S^T a: one per partition (column)
  double residual = 0;               // max_j |alpha_j - 1|
  double error = 0;                  // err(S) = ||alpha - 1||^2
  double amplification = 0;          // kappa(S) = sum_i |a_i| ||b_i||_1 / k (docs/coding.md §1.5)
};

// Generic decoder (docs/coding.md §2): the minimum-norm least-squares a for
// B_S^T a = 1, computed in double. b_s: one row per arrived member, one column per partition.
// An empty b_s is "not decodable" with residual 1 and error k. Never returns decodable=true for
// a wrong sum: decodability is decided by the residual of the returned a, not by a rank test.
// Throws std::invalid_argument when b_s has no columns or the tolerance is not positive.
//
// Rank-deficient systems (duplicated rows, a partition no arrival holds, too few arrivals) have
// many least-squares solutions; the decoder returns the one of minimum norm, with the numerical
// rank decided explicitly: a column-pivoted QR of B_S^T takes every pivot at or below
// kDecodingRankThreshold times the largest as zero: a row whose part independent of the others
// is that small relative to the matrix counts as dependent, which keeps the coefficients small
// (large ones amplify the members' disagreement). The
// entries of the codes' matrices are far from the threshold on both sides, so every CPU finds
// the same rank and the same a up to rounding.
inline constexpr double kDecodingRankThreshold = 1e-10;

Decoding decode_least_squares(const Eigen::MatrixXd& b_s, double tolerance = 1e-8);

// The same for another target than the plain sum: the minimum-norm a for B_S^T a = target
// (e.g. one sub-block of the sum for communication-efficient codes), with the same rank rule.
// alpha, residual and error then measure the distance to `target`, and amplification divides
// by ||target||_1.
Decoding decode_least_squares_to(const Eigen::MatrixXd& b_s, const Eigen::VectorXd& target,
                                 double tolerance = 1e-8);

// Fills alpha, residual, error, amplification and decodable for coefficients chosen by any
// decoder (fixed weights, first responder per group, ...), so every decoder reports the same
// quantities in the same way. coefficients.size() must equal b_s.rows().
Decoding evaluate_decoding(const Eigen::MatrixXd& b_s, std::vector<double> coefficients,
                           double tolerance = 1e-8);
Decoding evaluate_decoding_to(const Eigen::MatrixXd& b_s, const Eigen::VectorXd& target,
                              std::vector<double> coefficients, double tolerance = 1e-8);

}  // namespace fastk::coding
