// A vector compressed for the wire, and the compressors of compressed gossip (docs/compression.md).
// Pure: no I/O. node/wire/ turns a Compressed into bytes and back; the protocol checks a
// received one with invalid() before it uses it, since a frame may be forged.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fastk::compression {

enum class Kind : std::uint8_t {
  kFloat16 = 1,  // every value as IEEE half precision
  kInt8 = 2,     // per chunk: a scale and one signed byte per value, stochastic rounding
  kQsgd = 3,     // the vector's norm and one signed level per value (QSGD), stochastic rounding
  kTopK = 4,     // the k values of largest magnitude and their indices
  kRandomK = 5,  // k values at random indices and the indices
};
// "fp16", "int8", "qsgd", "top_k", "random_k"; throws std::invalid_argument otherwise.
Kind parse_kind(const std::string& name);
std::string to_string(Kind kind);

struct Compressed {
  Kind kind = Kind::kFloat16;
  std::uint32_t length = 0;            // of the vector it stands for
  std::uint32_t parameter = 0;         // int8: the chunk; qsgd: the levels; else 0
  std::vector<float> scales;           // int8: one per chunk; qsgd: {norm}
  std::vector<std::int8_t> codes;      // int8, qsgd: one per value
  std::vector<std::uint16_t> halves;   // fp16: one per value
  std::vector<std::uint32_t> indices;  // top_k, random_k: strictly increasing, < length
  std::vector<float> values;           // top_k, random_k: one per index

  // What it takes on the wire beyond the message header (node/WIRE.md).
  std::size_t payload_bytes() const;
};

// Why `c` cannot stand for a vector (sizes that do not fit its kind and length, indices out of
// order or range, a non-finite or negative scale, a parameter out of range); nullopt if it can.
std::optional<std::string> invalid(const Compressed& c);

// Adds the vector `c` stands for, times `weight`, to `out` (out.size() == c.length; `c` valid).
void add_decompressed(const Compressed& c, float weight, std::span<float> out);

}  // namespace fastk::compression
