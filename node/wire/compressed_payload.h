// Payload kinds 5..9 of node/WIRE.md: a compressed difference of compressed gossip
// (COMPRESSED_DIFFERENCE messages), one kind per compressor. Layout, little-endian:
//   u32 length (of the vector it stands for), u32 parameter (int8: chunk; qsgd: levels; else 0)
//   fp16      length x u16 halves
//   int8      ceil(length / chunk) x f32 scales, length x i8 codes
//   qsgd      f32 norm, length x i8 codes
//   top_k     u32 count (<= length), count x u32 indices, count x f32 values
//   random_k  likewise
// The decoder checks that the sizes fit (compressed_payload_fits); what the values mean
// (indices in order, finite scales, codes within the levels) the protocol checks with
// compression::invalid, since it decides what a bad difference costs.
#pragma once

#include <span>

#include "compression/compressed.h"
#include "node/wire/encoder.h"

namespace fastk::node::wire {

inline constexpr std::size_t kCompressedPrefixBytes = 8;

PayloadKind payload_kind_of(compression::Kind kind);

// Whether `payload` has the layout of `kind` (a compressed kind), every size matching its
// length fields. Never throws.
bool compressed_payload_fits(PayloadKind kind, std::span<const std::byte> payload);
// Reads a payload for which compressed_payload_fits(kind, payload) holds.
compression::Compressed read_compressed_payload(PayloadKind kind,
                                                std::span<const std::byte> payload);

// Throws std::invalid_argument if `difference` is invalid() (a programming error).
EncodedMessage encode_compressed_difference(PeerId sender, std::int64_t iteration,
                                            const compression::Compressed& difference);

}  // namespace fastk::node::wire
