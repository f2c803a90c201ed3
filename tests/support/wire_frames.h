// Test helpers: wire messages as plain byte vectors, so tests and the fuzz target can edit
// them (and re-seal the checksum to get past it to the checks behind it).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "node/wire/byte_order.h"
#include "node/wire/checksum.h"
#include "node/wire/decoder.h"
#include "node/wire/encoder.h"

namespace fastk::testing {

using Frame = std::vector<std::byte>;
using Frames = std::vector<Frame>;

inline Frames to_frames(const node::wire::EncodedMessage& m) {
  Frames frames{Frame(m.header.begin(), m.header.end())};
  if (m.has_payload_frame) frames.emplace_back(m.payload.bytes.begin(), m.payload.bytes.end());
  return frames;
}

// Recomputes the checksum of an edited message (header of at least kHeaderBytes).
inline void reseal(Frames& frames) {
  using namespace node::wire;
  if (frames.empty() || frames[0].size() < kHeaderBytes) return;
  std::uint32_t crc = crc32c_extend(0, std::span(frames[0]).first(kChecksumOffset));
  if (frames.size() > 1) crc = crc32c_extend(crc, frames[1]);
  store_le<std::uint32_t>(&frames[0][kChecksumOffset], crc);
}

inline node::wire::DecodeResult decode_frames(
    const Frames& frames, const node::wire::WirePeers& peers,
    std::optional<node::wire::PeerId> authenticated_sender = std::nullopt) {
  std::vector<std::span<const std::byte>> views(frames.begin(), frames.end());
  return node::wire::decode(views, peers, authenticated_sender);
}

}  // namespace fastk::testing
