// IEEE 754 half precision in portable code (no F16C: the build must run on any x86-64): round
// to nearest, ties to even, subnormals kept.
#pragma once

#include <bit>
#include <cstdint>

namespace fastk::compression {

// `value` must be finite and within +-65504 (the largest half); the caller clamps.
// from_half: infinities and NaNs (exponent 31) come back as such; invalid() refuses them in a
// frame. Inline, so that the loops over a model vectorise.
// Both directions are branch-free on the common path (the compiler vectorises the loops
// that call them inline) and exact. They rely on float arithmetic rounding to nearest even
// and keeping subnormals, which is the default everywhere fastk runs (no -ffast-math).

inline std::uint16_t to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal half counts units of 2^-24, which is the spacing of floats in
    // [0.5, 1). Adding 0.5 lets the float unit round the value onto that grid (ties to even);
    // the units are then the low bits. 2^-14 itself comes out as 0x400, the smallest normal.
    const float on_grid = std::bit_cast<float>(magnitude) + 0.5f;
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(on_grid) - 0x3f000000u));
  }
  // A normal half: re-bias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits,
  // ties to even (0xfff plus the lowest kept bit carries exactly when the dropped 13 bits are
  // above half, or at half with an odd kept part). A carry out of the mantissa correctly bumps
  // the exponent.
  const std::uint32_t rebased = magnitude - (112u << 23);
  return static_cast<std::uint16_t>(sign | ((rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13));
}

inline float from_half(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t rest = half & 0x7fffu;
  if (rest >= 0x7c00u) {  // infinity or NaN
    return std::bit_cast<float>(sign | 0x7f800000u | ((rest & 0x3ffu) << 13));
  }
  // The half's exponent and mantissa in a float's places read as its value times 2^-112,
  // normal or subnormal alike; scaling by a power of two is exact.
  const float scaled = std::bit_cast<float>(rest << 13) * 0x1p112f;
  return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(scaled));
}

}  // namespace fastk::compression
