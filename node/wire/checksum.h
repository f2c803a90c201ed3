// The frame checksum: CRC-32C (Castagnoli polynomial, as in iSCSI, ext4 and LevelDB). On
// x86-64 CPUs with SSE4.2 and PCLMULQDQ it runs on the crc32 instruction over three
// interleaved stripes joined by carry-less multiplication (see benchmarks/wire_benchmark.cc
// for its speed against one stripe, the portable version and zlib's CRC-32); elsewhere a
// portable slicing-by-8 table version gives the same values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fastk::node::wire {

// Extends `crc` (0 to start) over `bytes`: crc32c_extend(crc32c_extend(0, a), b) is the
// CRC-32C of a followed by b. Picks the fastest implementation this CPU has.
std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> bytes);

// The portable implementation (exposed so tests can check both agree).
std::uint32_t crc32c_extend_portable(std::uint32_t crc, std::span<const std::byte> bytes);

}  // namespace fastk::node::wire
