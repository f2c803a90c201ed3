// Communication-efficient code with cyclic placement and a generic MDS generator (docs/coding.md
// §4.3, generalising Ye & Abbe with a Gaussian instead of a Vandermonde matrix): member i holds
// partitions i..i+d-1 (mod n), d = s + m; G is (n - s) x n Gaussian, and the weights of
// partition j's sub-block u are chosen so that the messages are y_i = G[:, i]^T c with the
// first m entries of c equal to the m sub-sums. Any n - s messages determine c.
#pragma once

#include <cstdint>
#include <string>

#include "coding/communication_efficient_code.h"

namespace fastk::coding {

class CyclicMdsCode : public CommunicationEfficientCode {
 public:
  // Needs n >= 1, s >= 0, m >= 1 and s + m <= n; throws std::invalid_argument otherwise or
  // when the drawn generator makes a weight system singular (probability 0; try another seed).
  CyclicMdsCode(int n, int s, int m, std::uint64_t seed = 1);

  std::string name() const override;
  const Eigen::MatrixXd& generator() const { return generator_; }
  // The largest weight the construction computed for a member that does not hold the
  // partition, before it was set to exactly 0: round-off only, if the construction is right.
  double max_off_support_weight() const { return max_off_support_weight_; }

  struct Construction {
    Eigen::MatrixXd generator, coefficients;
    double max_off_support_weight = 0;
  };

 private:
  CyclicMdsCode(int n, int s, int m, std::uint64_t seed, Construction construction);

  Eigen::MatrixXd generator_;
  std::uint64_t seed_;
  double max_off_support_weight_;
};

}  // namespace fastk::coding
