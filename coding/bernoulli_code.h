// Bernoulli gradient code (Charles et al., docs/coding.md §5.2): B_ij ~ Bernoulli(d/k)
// independently, a sparse random assignment with expected load d. The one-step decoder
// a_i = k/(|S| d) needs no solve and is unbiased over the random assignment; the optimal
// (least-squares) decoder is never worse for a given arrival set.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "coding/gradient_code.h"

namespace fastk::coding {

class BernoulliCode : public GradientCode {
 public:
  // n members, k partitions, expected load d in (0, k]; seeded and portable. Throws
  // std::invalid_argument for other shapes.
  BernoulliCode(int n, int k, double d, std::uint64_t seed);

  std::string name() const override;
  int stragglers_tolerated() const override { return 0; }
  bool approximate() const override { return true; }
  // decode() is the optimal least-squares decoder; this is the fixed-weight one.
  Decoding decode_one_step(std::span<const int> arrived) const;

 private:
  double d_;
  std::uint64_t seed_;
};

}  // namespace fastk::coding
