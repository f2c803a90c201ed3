#include "compression/public_estimate.h"

#include <stdexcept>
#include <string>

namespace fastk::compression {

Compressed PublicEstimate::advance(const CompressorSpec& spec, std::span<const float> x,
                                   std::uint64_t seed) {
  if (x.size() != value_.size()) {
    throw std::invalid_argument("public estimate of " + std::to_string(value_.size()) +
                                " values advanced with " + std::to_string(x.size()));
  }
  difference_.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) difference_[i] = x[i] - value_[i];
  Compressed q = compress(spec, difference_, seed);
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
