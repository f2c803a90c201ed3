// Payload kind 3 of node/WIRE.md: the coded gradient a member of a coded neighbourhood
// sends one neighbour (CODED_GRADIENT messages). Layout, little-endian:
//   u32 c (covers count), u32 r (role count), f64 compute_s,
//   c x u32 covered partitions, r x u32 role partitions, float32 gradient (rest of frame).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "node/wire/encoder.h"

namespace fastk::node::wire {

inline constexpr std::size_t kCodedPrefixBytes = 16;
inline constexpr std::uint32_t kMaxCodedIds = 4096;  // far above any neighbourhood

struct CodedPayload {
  std::vector<std::uint32_t> covers;
  std::vector<std::uint32_t> role;
  double compute_s = 0;
  std::vector<float> gradient;
};

// Whether `payload` has the layout above (counts within bounds and the frame, a whole
// number of floats after the ids, a finite non-negative compute time). Never throws.
bool coded_payload_fits(std::span<const std::byte> payload);
// Reads a payload for which coded_payload_fits() holds.
CodedPayload read_coded_payload(std::span<const std::byte> payload);

EncodedMessage encode_coded_gradient(PeerId sender, std::int64_t iteration,
                                     std::span<const std::uint32_t> covers,
                                     std::span<const std::uint32_t> role, double compute_s,
                                     std::span<const float> gradient);

}  // namespace fastk::node::wire
