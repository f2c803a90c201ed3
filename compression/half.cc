#include "compression/half.h"

#include <bit>

namespace fastk::compression {
namespace {

// Drops the low `bits` bits of `value`, rounding to nearest, ties to even.
std::uint32_t round_off(std::uint32_t value, int bits) {
  const std::uint32_t kept = value >> bits;
  const std::uint32_t rest = value & ((1u << bits) - 1);
  const std::uint32_t half = 1u << (bits - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

}  // namespace

std::uint16_t to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal half
    // Re-bias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits; a carry out
    // of the mantissa correctly bumps the exponent.
    const std::uint32_t rebased = magnitude - (112u << 23);
    return static_cast<std::uint16_t>(sign | round_off(rebased, 13));
  }
  if (magnitude < 0x33000000u) return sign;  // below 2^-25: rounds to zero
  // A subnormal half counts units of 2^-24.
  const int exponent = static_cast<int>(magnitude >> 23);
  const std::uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  return static_cast<std::uint16_t>(sign | round_off(mantissa, 126 - exponent));
}

float from_half(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  const std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    const float value = static_cast<float>(mantissa) * 0x1p-24f;  // exact
    return sign ? -value : value;
  }
  const std::uint32_t wide = exponent == 31 ? 0xffu : exponent + 112;
  return std::bit_cast<float>(sign | (wide << 23) | (mantissa << 13));
}

}  // namespace fastk::compression
