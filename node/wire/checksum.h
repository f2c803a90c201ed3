// The frame checksum: CRC-32 (IEEE 802.3 polynomial, as in zlib, gzip and PNG), computed
// with zlib's crc32_z. zlib 1.2.12+ uses a braided table implementation that runs at
// several GB/s, so a 400 KB model costs well under a millisecond (see
// benchmarks/wire_benchmark.cc for the measured figure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fastk::node::wire {

// Extends `crc` (0 to start) over `bytes`.
std::uint32_t crc32_extend(std::uint32_t crc, std::span<const std::byte> bytes);

}  // namespace fastk::node::wire
