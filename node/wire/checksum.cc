#include "node/wire/checksum.h"

#include <zlib.h>

namespace fastk::node::wire {

std::uint32_t crc32_extend(std::uint32_t crc, std::span<const std::byte> bytes) {
  if (bytes.empty()) return crc;  // zlib treats a null buffer as "return the initial value"
  return static_cast<std::uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

}  // namespace fastk::node::wire
