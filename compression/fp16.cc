#include <algorithm>

#include "compression/compressors.h"
#include "compression/half.h"

namespace fastk::compression {

Compressed compress_fp16(std::span<const float> v) {
  constexpr float kLargestHalf = 65504.0f;
  Compressed c;
  c.kind = Kind::kFloat16;
  c.length = static_cast<std::uint32_t>(v.size());
  c.halves.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    c.halves[i] = to_half(std::clamp(v[i], -kLargestHalf, kLargestHalf));
  }
  return c;
}

}  // namespace fastk::compression
