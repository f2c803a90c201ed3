// IEEE 754 half precision in portable code (no F16C: the build must run on any x86-64): round
// to nearest, ties to even, subnormals kept.
#pragma once

#include <bit>
#include <cstdint>

namespace fastk::compression {

// `value` must be finite and within +-65504 (the largest half); the caller clamps.
// from_half: infinities and NaNs (exponent 31) come back as such; invalid() refuses them in a
// frame. Inline, so that the loops over a model vectorise.
// Both directions are branch-free (the compiler vectorises the loops that call them inline),
// exact, and never make a subnormal float out of a subnormal half: arithmetic on one costs x86
// CPUs a microcode assist of about a hundred cycles, and the halves of small differences are
// often subnormal. They rely
// on float arithmetic rounding to nearest even, the default everywhere fastk runs.

inline std::uint16_t to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  // Below 2^-14, a subnormal half counts units of 2^-24, which is the spacing of floats in
  // [0.5, 1). Adding 0.5 lets the float unit round the value onto that grid (ties to even);
  // the units are then the low bits. 2^-14 itself comes out as 0x400, the smallest normal.
  const float on_grid = std::bit_cast<float>(magnitude) + 0.5f;
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(on_grid) - 0x3f000000u;
  // A normal half: re-bias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits,
  // ties to even (0xfff plus the lowest kept bit carries exactly when the dropped 13 bits are
  // above half, or at half with an odd kept part). A carry out of the mantissa correctly bumps
  // the exponent. (Computed for every value, used for normal ones: no branch.)
  const std::uint32_t rebased = magnitude - (112u << 23);
  const std::uint32_t normal = (rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13;
  return static_cast<std::uint16_t>(sign | (magnitude < 0x38800000u ? subnormal : normal));
}

inline float from_half(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t rest = half & 0x7fffu;
  // Exponent 1..30: re-bias the exponent (15 -> 127). 31 (infinity, NaN): all ones.
  const std::uint32_t normal =
      rest >= 0x7c00u ? 0x7f800000u | ((rest & 0x3ffu) << 13) : (rest << 13) + (112u << 23);
  // Exponent 0: the mantissa counts units of 2^-24; a whole number times a power of two is
  // exact, and both are normal floats.
  const float subnormal = static_cast<float>(rest) * 0x1p-24f;
  const std::uint32_t magnitude = rest < 0x400u ? std::bit_cast<std::uint32_t>(subnormal) : normal;
  return std::bit_cast<float>(sign | magnitude);
}

}  // namespace fastk::compression
