// IEEE 754 half precision in portable code (no F16C: the build must run on any x86-64): round
// to nearest, ties to even, subnormals kept.
#pragma once

#include <cstdint>

namespace fastk::compression {

// `value` must be finite and within +-65504 (the largest half); the caller clamps.
std::uint16_t to_half(float value);
// Infinities and NaNs (exponent 31) come back as such; invalid() refuses them in a frame.
float from_half(std::uint16_t half);

}  // namespace fastk::compression
