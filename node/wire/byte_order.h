// Little-endian loads and stores on byte buffers. The wire format is little-endian whatever
// the host; these compile to plain moves on x86 and ARM and never read out of bounds (the
// caller passes a buffer it has already checked to be long enough).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fastk::node::wire {

template <typename T>
T load_le(const std::byte* p) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
  }
  return static_cast<T>(value);
}

template <typename T>
void store_le(std::byte* p, T value) {
  auto bits = static_cast<std::uint64_t>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    p[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xFF);
  }
}

}  // namespace fastk::node::wire
