// CHOCO-SGD's public estimate of one peer's model (Koloskova et al. 2019; docs/compression.md
// §1): x_hat, which the owner and each of its neighbours keep bit for bit alike because they
// all start from the same model and apply the same compressed differences. The owner sends
// q = Q(x - x_hat) and adds it; what Q dropped stays in x - x_hat and is sent later (error
// feedback).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compression/compressor.h"

namespace fastk::compression {

// The factor compressed gossip divides a QSGD difference by (public_estimate.cc).
double qsgd_tau(const Compressed& q);

class PublicEstimate {
 public:
  explicit PublicEstimate(std::vector<float> initial) : value_(std::move(initial)) {}

  // The owner: q = Q(x - x_hat) with `seed` (qsgd: divided by qsgd_tau), then x_hat += q;
  // returns q for the neighbours.
  // Throws std::invalid_argument if x has another length.
  Compressed advance(const CompressorSpec& spec, std::span<const float> x, std::uint64_t seed);
  // A neighbour: x_hat += q. Throws std::invalid_argument for a q that is invalid() or of
  // another length (a forged frame must not reach the estimate).
  void apply(const Compressed& q);

  std::span<const float> value() const { return value_; }

 private:
  std::vector<float> value_;
  std::vector<float> difference_;  // scratch: x - x_hat
};

}  // namespace fastk::compression
