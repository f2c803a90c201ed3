// One function per compressor (compressor.h says what each promises), for compress() to
// dispatch to. Internal to compression/.
#pragma once

#include <cstdint>
#include <span>

#include "compression/compressed.h"

namespace fastk::compression {

// A uniform draw in [0, 1) for value i of a vector compressed with `seed`: a pure function of
// both, so a simulated and a real peer round alike.
double uniform_at(std::uint64_t seed, std::uint64_t i);

Compressed compress_fp16(std::span<const float> v);
Compressed compress_int8(std::span<const float> v, std::uint32_t chunk, std::uint64_t seed);
Compressed compress_qsgd(std::span<const float> v, std::uint32_t levels, std::uint64_t seed);
// k of the values: the largest in magnitude, or at random indices.
Compressed compress_top_k(std::span<const float> v, std::uint32_t k);
Compressed compress_random_k(std::span<const float> v, std::uint32_t k, std::uint64_t seed);

}  // namespace fastk::compression
