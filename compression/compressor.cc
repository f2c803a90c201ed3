#include "compression/compressor.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "compression/compressors.h"

namespace fastk::compression {
namespace {

std::uint32_t kept(const CompressorSpec& spec, std::size_t length) {
  const auto k = static_cast<std::uint32_t>(std::ceil(spec.fraction * static_cast<double>(length)));
  return length == 0 ? 0 : std::max<std::uint32_t>(1, k);
}

}  // namespace

void check(const CompressorSpec& spec) {
  if (spec.kind == Kind::kInt8 && spec.chunk < 1) {
    throw std::invalid_argument("compression.chunk must be >= 1");
  }
  if (spec.kind == Kind::kQsgd && (spec.levels < 1 || spec.levels > 127)) {
    throw std::invalid_argument("compression.levels must be 1..127 (a level is a signed byte)");
  }
  if ((spec.kind == Kind::kTopK || spec.kind == Kind::kRandomK) &&
      !(spec.fraction > 0 && spec.fraction <= 1)) {
    throw std::invalid_argument("compression.fraction must be in (0, 1]");
  }
}

Compressed compress(const CompressorSpec& spec, std::span<const float> v, std::uint64_t seed) {
  switch (spec.kind) {
    case Kind::kFloat16:
      return compress_fp16(v);
    case Kind::kInt8:
      return compress_int8(v, spec.chunk, seed);
    case Kind::kQsgd:
      return compress_qsgd(v, spec.levels, seed);
    case Kind::kTopK:
      return compress_top_k(v, kept(spec, v.size()));
    case Kind::kRandomK:
      return compress_random_k(v, kept(spec, v.size()), seed);
  }
  throw std::invalid_argument("unknown compressor");
}

}  // namespace fastk::compression
