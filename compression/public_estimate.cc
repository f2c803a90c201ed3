#include "compression/public_estimate.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fastk::compression {

// QSGD is unbiased but no contraction: its error can exceed the vector (by a factor up to
// tau - 1). CHOCO-SGD (Koloskova et al. 2019, §5) sends it divided by
// tau = 1 + min(n / s^2, sqrt(n) / s), which is a contraction with delta = 1 / tau; without it
// the estimates overshoot and the training diverges (measured: docs/compression.md §5.1).
double qsgd_tau(const Compressed& q) {
  const double n = q.length, s = q.parameter;
  return 1.0 + std::min(n / (s * s), std::sqrt(n) / s);
}

Compressed PublicEstimate::advance(const CompressorSpec& spec, std::span<const float> x,
                                   std::uint64_t seed) {
  if (x.size() != value_.size()) {
    throw std::invalid_argument("public estimate of " + std::to_string(value_.size()) +
                                " values advanced with " + std::to_string(x.size()));
  }
  difference_.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) difference_[i] = x[i] - value_[i];
  Compressed q = compress(spec, difference_, seed);
  if (q.kind == Kind::kQsgd) q.scales[0] = static_cast<float>(q.scales[0] / qsgd_tau(q));
  add_decompressed(q, 1.0f, value_);
  return q;
}

void PublicEstimate::apply(const Compressed& q) {
  if (const auto why = invalid(q)) throw std::invalid_argument("compressed difference: " + *why);
  if (q.length != value_.size()) {
    throw std::invalid_argument("compressed difference of " + std::to_string(q.length) +
                                " values for an estimate of " + std::to_string(value_.size()));
  }
  add_decompressed(q, 1.0f, value_);
}

}  // namespace fastk::compression
