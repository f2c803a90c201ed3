// Stochastic block code (Charles and Papailiopoulos, "Gradient coding using the stochastic
// block model"; docs/coding.md §5.9): members and partitions fall into c communities (both cut
// into c contiguous runs of near-equal size), and member i holds partition j with probability
// p_in when they share a community and p_out otherwise, independently: a Bernoulli code
// (§5.2) whose assignment follows a community structure, as data does when it is placed near
// the workers of a rack. Decoded by the optimal least-squares decoder; approximate.
#pragma once

#include <cstdint>
#include <string>

#include "coding/gradient_code.h"

namespace fastk::coding {

class StochasticBlockCode : public GradientCode {
 public:
  // n members, k partitions, 1 <= c <= min(n, k) communities, probabilities in [0, 1] with
  // p_in > 0; seeded and portable. Throws std::invalid_argument for other shapes.
  StochasticBlockCode(int n, int k, int communities, double p_in, double p_out, std::uint64_t seed);

  std::string name() const override;
  int stragglers_tolerated() const override { return 0; }
  bool approximate() const override { return true; }

  // The community of member i (of partition j: the same rule over k).
  static int community(int index, int count, int communities);

 private:
  int communities_;
  double p_in_, p_out_;
  std::uint64_t seed_;
};

}  // namespace fastk::coding
