#include "node/wire/compressed_payload.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "node/wire/byte_order.h"

namespace fastk::node::wire {
namespace {

using compression::Compressed;
using compression::Kind;

constexpr std::uint64_t chunks(std::uint64_t length, std::uint64_t chunk) {
  return (length + chunk - 1) / chunk;
}

bool sparse(PayloadKind kind) {
  return kind == PayloadKind::kTopK || kind == PayloadKind::kRandomK;
}

// The payload size `kind` needs for `length` values, or 0 if the parameter is impossible;
// sparse kinds: the size of what follows the count. 64-bit, so no field can overflow it.
std::uint64_t expected_bytes(PayloadKind kind, std::uint64_t length, std::uint64_t parameter) {
  switch (kind) {
    case PayloadKind::kFloat16:
      return parameter == 0 ? kCompressedPrefixBytes + 2 * length : 0;
    case PayloadKind::kInt8:
      return parameter >= 1 ? kCompressedPrefixBytes + 4 * chunks(length, parameter) + length : 0;
    case PayloadKind::kQsgd:
      return parameter >= 1 && parameter <= 127 ? kCompressedPrefixBytes + 4 + length : 0;
    default:
      return 0;
  }
}

// Copies `count` values of T from `at` (host bytes: the format is little-endian and so is
// every host fastk builds on, format.h), and moves `at` past them.
template <typename T>
std::vector<T> take(std::span<const std::byte> payload, std::size_t& at, std::size_t count) {
  std::vector<T> out(count);
  if (count > 0) std::memcpy(out.data(), payload.data() + at, count * sizeof(T));
  at += count * sizeof(T);
  return out;
}

template <typename T>
void put(std::vector<std::byte>& bytes, std::size_t& at, const std::vector<T>& values) {
  if (!values.empty()) std::memcpy(bytes.data() + at, values.data(), values.size() * sizeof(T));
  at += values.size() * sizeof(T);
}

}  // namespace

PayloadKind payload_kind_of(compression::Kind kind) {
  switch (kind) {
    case Kind::kFloat16:
      return PayloadKind::kFloat16;
    case Kind::kInt8:
      return PayloadKind::kInt8;
    case Kind::kQsgd:
      return PayloadKind::kQsgd;
    case Kind::kTopK:
      return PayloadKind::kTopK;
    case Kind::kRandomK:
      return PayloadKind::kRandomK;
  }
  throw std::invalid_argument("no payload kind for compressor " + compression::to_string(kind));
}

bool compressed_payload_fits(PayloadKind kind, std::span<const std::byte> payload) {
  if (!compressed_kind(kind) || payload.size() < kCompressedPrefixBytes) return false;
  const std::uint64_t length = load_le<std::uint32_t>(payload.data());
  const std::uint64_t parameter = load_le<std::uint32_t>(payload.data() + 4);
  if (!sparse(kind)) return payload.size() == expected_bytes(kind, length, parameter);
  if (parameter != 0 || payload.size() < kCompressedPrefixBytes + 4) return false;
  const std::uint64_t count = load_le<std::uint32_t>(payload.data() + kCompressedPrefixBytes);
  return count <= length && payload.size() == kCompressedPrefixBytes + 4 + 8 * count;
}

Compressed read_compressed_payload(PayloadKind kind, std::span<const std::byte> payload) {
  Compressed c;
  c.length = load_le<std::uint32_t>(payload.data());
  c.parameter = load_le<std::uint32_t>(payload.data() + 4);
  std::size_t at = kCompressedPrefixBytes;
  switch (kind) {
    case PayloadKind::kFloat16:
      c.kind = Kind::kFloat16;
      c.halves = take<std::uint16_t>(payload, at, c.length);
      break;
    case PayloadKind::kInt8:
    case PayloadKind::kQsgd:
      c.kind = kind == PayloadKind::kInt8 ? Kind::kInt8 : Kind::kQsgd;
      c.scales =
          take<float>(payload, at, kind == PayloadKind::kInt8 ? chunks(c.length, c.parameter) : 1);
      c.codes = take<std::int8_t>(payload, at, c.length);
      break;
    default: {  // top_k, random_k
      c.kind = kind == PayloadKind::kTopK ? Kind::kTopK : Kind::kRandomK;
      const std::size_t count = load_le<std::uint32_t>(payload.data() + at);
      at += 4;
      c.indices = take<std::uint32_t>(payload, at, count);
      c.values = take<float>(payload, at, count);
    }
  }
  return c;
}

EncodedMessage encode_compressed_difference(PeerId sender, std::int64_t iteration,
                                            const Compressed& difference) {
  if (const auto why = compression::invalid(difference)) {
    throw std::invalid_argument("encode_compressed_difference: " + *why);
  }
  auto bytes = std::make_shared<std::vector<std::byte>>(difference.payload_bytes());
  store_le<std::uint32_t>(bytes->data(), difference.length);
  store_le<std::uint32_t>(bytes->data() + 4, difference.parameter);
  std::size_t at = kCompressedPrefixBytes;
  put(*bytes, at, difference.halves);
  put(*bytes, at, difference.scales);
  put(*bytes, at, difference.codes);
  if (difference.kind == Kind::kTopK || difference.kind == Kind::kRandomK) {
    store_le<std::uint32_t>(bytes->data() + at,
                            static_cast<std::uint32_t>(difference.indices.size()));
    at += 4;
    put(*bytes, at, difference.indices);
    put(*bytes, at, difference.values);
  }
  if (at != bytes->size()) {
    throw std::logic_error("encode_compressed_difference: wrote " + std::to_string(at) +
                           " bytes of " + std::to_string(bytes->size()));
  }
  std::span<const std::byte> view(*bytes);
  return {encode_header({MessageType::kCompressedDifference, payload_kind_of(difference.kind),
                         sender, iteration},
                        view),
          {std::move(bytes), view},
          true};
}

}  // namespace fastk::node::wire
