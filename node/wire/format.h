// The fastk wire format, version 1: constants and plain types shared by the encoder and the
// decoder. node/WIRE.md is the specification; the offsets here must match its table.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fastk::node::wire {

using PeerId = std::uint32_t;

inline constexpr std::array<std::byte, 4> kMagic = {std::byte{'F'}, std::byte{'K'}, std::byte{'W'},
                                                    std::byte{'R'}};
inline constexpr std::uint8_t kVersion = 1;

// Header frame layout (all integers little-endian).
inline constexpr std::size_t kMagicOffset = 0;          // 4 bytes "FKWR"
inline constexpr std::size_t kVersionOffset = 4;        // u8
inline constexpr std::size_t kTypeOffset = 5;           // u8 MessageType
inline constexpr std::size_t kKindOffset = 6;           // u8 PayloadKind
inline constexpr std::size_t kReservedOffset = 7;       // u8, zero in version 1
inline constexpr std::size_t kSenderOffset = 8;         // u32 peer id
inline constexpr std::size_t kPayloadBytesOffset = 12;  // u32 payload frame length
inline constexpr std::size_t kIterationOffset = 16;     // i64 iteration tag, >= 0
inline constexpr std::size_t kChecksumOffset = 24;      // u32 CRC-32C of bytes 0..23 + payload
inline constexpr std::size_t kHeaderBytes = 28;

enum class MessageType : std::uint8_t {
  kHello = 1,           // "I am peer s of this run": sent at start-up until answered
  kHelloAck = 2,        // answer to a HELLO
  kModel = 3,           // parameters x_s(k) of iteration k
  kBye = 4,             // the sender is leaving; stop waiting for it
  kCodedGradient = 5,   // coded neighbourhoods: the gradient sum for the receiver, iteration k
  kSharedModel = 6,     // x_s(k) is in the sender's shared-memory slot named by the payload
  kAverageRequest = 7,  // ad_psgd: average with x_s(k), the payload (active -> passive peer)
  kAverageReply = 8,    // ad_psgd: add this half of the difference (empty: declined)
  kSharedAverageRequest = 9,   // AVERAGE_REQUEST whose values are in a shared-memory slot
  kSharedAverageReply = 10,    // AVERAGE_REPLY likewise
  kCompressedDifference = 11,  // compressed gossip: q_s(k), the change of x_s's public estimate
};

enum class PayloadKind : std::uint8_t {
  kNone = 0,           // no payload frame
  kHello = 1,          // HelloInfo, kHelloPayloadBytes
  kFloat32 = 2,        // float32 vector, little-endian
  kCodedGradient = 3,  // coded_payload.h: covered partitions, role, compute time, float32
  kModelSlot = 4,      // model_slot_payload.h: slot index, generation, float count
  // compressed_payload.h, one kind per compressor (compression/compressed.h):
  kFloat16 = 5,  // one half per value
  kInt8 = 6,     // per-chunk scales, one signed byte per value
  kQsgd = 7,     // the norm, one signed level per value
  kTopK = 8,     // count, indices, values
  kRandomK = 9,  // likewise
};
// Whether a kind is one of the compressed ones (5..9).
constexpr bool compressed_kind(PayloadKind kind) {
  return kind >= PayloadKind::kFloat16 && kind <= PayloadKind::kRandomK;
}

// What a HELLO / HELLO_ACK carries so that a peer of another run (or of the same run with
// another config) is recognised and rejected instead of being mixed with.
struct HelloInfo {
  std::uint64_t run_id = 0;      // FNV-1a hash of the config file's bytes
  std::uint32_t peer_count = 0;  // number of peers in the sender's config
  bool operator==(const HelloInfo&) const = default;
};
inline constexpr std::size_t kHelloPayloadBytes = 12;  // u64 run_id, u32 peer_count

// The table of message types: each type's name and the payload kind it carries (the only one
// the decoder accepts). The decoder's check of the type byte, every name in logs and counts,
// and the payload check all come from here. It is a switch without a default, compiled with
// -Wswitch as an error, so a type added to MessageType without its row does not build, where
// it would otherwise be a message every peer rejects at run time.
struct MessageTypeInfo {
  std::string_view name;  // empty: not a message type of this version
  PayloadKind payload = PayloadKind::kNone;
  bool any_compressed = false;  // carries any compressed kind instead of `payload`
};
// -Wswitch as an error here whatever FASTK_WERROR says: a missing row must not build.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
constexpr MessageTypeInfo info_of(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return {"HELLO", PayloadKind::kHello};
    case MessageType::kHelloAck:
      return {"HELLO_ACK", PayloadKind::kHello};
    case MessageType::kModel:
      return {"MODEL", PayloadKind::kFloat32};
    case MessageType::kBye:
      return {"BYE", PayloadKind::kNone};
    case MessageType::kCodedGradient:
      return {"CODED_GRADIENT", PayloadKind::kCodedGradient};
    case MessageType::kSharedModel:
      return {"SHARED_MODEL", PayloadKind::kModelSlot};
    case MessageType::kAverageRequest:
      return {"AVERAGE_REQUEST", PayloadKind::kFloat32};
    case MessageType::kAverageReply:
      return {"AVERAGE_REPLY", PayloadKind::kFloat32};
    case MessageType::kSharedAverageRequest:
      return {"SHARED_AVERAGE_REQUEST", PayloadKind::kModelSlot};
    case MessageType::kSharedAverageReply:
      return {"SHARED_AVERAGE_REPLY", PayloadKind::kModelSlot};
    case MessageType::kCompressedDifference:
      return {"COMPRESSED_DIFFERENCE", PayloadKind::kNone, true};
  }
  return {};  // a byte from the network that names no type
}
#pragma GCC diagnostic pop
// Whether a type byte from the network names a message type.
constexpr bool known_type(std::uint8_t raw) {
  return !info_of(static_cast<MessageType>(raw)).name.empty();
}
// The one kind `type` carries (kNone for COMPRESSED_DIFFERENCE, whose kinds are 5..9).
constexpr PayloadKind payload_kind_of(MessageType type) { return info_of(type).payload; }
// Whether `type` carries payload kind `raw` (a byte from the network).
constexpr bool carries(MessageType type, std::uint8_t raw) {
  const MessageTypeInfo info = info_of(type);
  const auto kind = static_cast<PayloadKind>(raw);
  return info.any_compressed ? compressed_kind(kind) : kind == info.payload;
}

// The type's name ("unknown" for a byte that names none).
constexpr std::string_view to_string(MessageType type) {
  const std::string_view name = info_of(type).name;
  return name.empty() ? "unknown" : name;
}

// Float payloads go on the wire as the host's bytes, without a copy; that is the
// little-endian format only on little-endian hosts.
static_assert(std::endian::native == std::endian::little,
              "fastk's zero-copy float payloads assume a little-endian host");

}  // namespace fastk::node::wire
