#include "node/wire/decoder.h"

#include <algorithm>
#include <stdexcept>

#include "node/wire/byte_order.h"
#include "node/wire/checksum.h"
#include "node/wire/coded_payload.h"
#include "node/wire/compressed_payload.h"
#include "node/wire/model_slot_payload.h"

namespace fastk::node::wire {
namespace {

Rejection reject(WireError cause, std::string detail) { return {cause, std::move(detail)}; }

// The payload size a kind allows; false when `bytes` is wrong for it.
bool payload_fits(PayloadKind kind, std::span<const std::byte> payload) {
  const std::size_t bytes = payload.size();
  switch (kind) {
    case PayloadKind::kNone:
      return bytes == 0;
    case PayloadKind::kHello:
      return bytes == kHelloPayloadBytes;
    case PayloadKind::kFloat32:
      return bytes % sizeof(float) == 0;
    case PayloadKind::kCodedGradient:
      return coded_payload_fits(payload);
    case PayloadKind::kModelSlot:
      return model_slot_fits(payload);
    case PayloadKind::kFloat16:
    case PayloadKind::kInt8:
    case PayloadKind::kQsgd:
    case PayloadKind::kTopK:
    case PayloadKind::kRandomK:
      return compressed_payload_fits(kind, payload);
  }
  return false;
}

}  // namespace

std::string_view to_string(WireError cause) {
  switch (cause) {
    case WireError::kBadFrameCount:
      return "bad frame count";
    case WireError::kBadHeader:
      return "bad header";
    case WireError::kBadMagic:
      return "bad magic";
    case WireError::kUnsupportedVersion:
      return "unsupported version";
    case WireError::kUnknownMessageType:
      return "unknown message type";
    case WireError::kBadPayloadKind:
      return "bad payload kind";
    case WireError::kBadPayloadLength:
      return "bad payload length";
    case WireError::kBadChecksum:
      return "bad checksum";
    case WireError::kUnknownSender:
      return "unknown sender";
    case WireError::kNotNeighbour:
      return "sender not a neighbour";
    case WireError::kWrongRun:
      return "wrong run";
    case WireError::kNotAuthenticated:
      return "sender not authenticated";
  }
  return "unknown cause";
}

WirePeers::WirePeers(PeerId self, HelloInfo run, std::span<const PeerId> senders)
    : self_(self), run_(run), may_send_(run.peer_count, false) {
  for (PeerId s : senders) {
    if (s >= run.peer_count || s == self) {
      throw std::invalid_argument("WirePeers: sender " + std::to_string(s) +
                                  " is not another peer of a run of " +
                                  std::to_string(run.peer_count) + " peers");
    }
    may_send_[s] = true;
  }
}

DecodeResult decode(std::span<const std::span<const std::byte>> frames, const WirePeers& peers,
                    std::optional<PeerId> authenticated_sender) {
  if (frames.empty() || frames.size() > 2) {
    return reject(WireError::kBadFrameCount, std::to_string(frames.size()) + " frames");
  }
  std::span<const std::byte> h = frames[0];
  if (h.size() < kVersionOffset + 1) {
    return reject(WireError::kBadHeader, "header frame of " + std::to_string(h.size()) + " bytes");
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), h.begin() + kMagicOffset)) {
    return reject(WireError::kBadMagic, "not a fastk frame");
  }
  const auto version = std::to_integer<std::uint8_t>(h[kVersionOffset]);
  if (version != kVersion) {
    return reject(WireError::kUnsupportedVersion, "version " + std::to_string(version) +
                                                      ", this peer speaks version " +
                                                      std::to_string(kVersion));
  }
  if (h.size() != kHeaderBytes) {
    return reject(WireError::kBadHeader, "header frame of " + std::to_string(h.size()) +
                                             " bytes, expected " + std::to_string(kHeaderBytes));
  }
  if (h[kReservedOffset] != std::byte{0}) {
    return reject(WireError::kBadHeader, "reserved byte set");
  }
  const auto raw_type = std::to_integer<std::uint8_t>(h[kTypeOffset]);
  if (!known_type(raw_type)) {
    return reject(WireError::kUnknownMessageType, "type " + std::to_string(raw_type));
  }
  const auto type = static_cast<MessageType>(raw_type);
  const auto raw_kind = std::to_integer<std::uint8_t>(h[kKindOffset]);
  const auto kind = static_cast<PayloadKind>(raw_kind);
  if (!carries(type, raw_kind)) {
    return reject(WireError::kBadPayloadKind,
                  "kind " + std::to_string(raw_kind) + " for " + std::string(to_string(type)));
  }
  const std::size_t expected_frames = kind == PayloadKind::kNone ? 1 : 2;
  if (frames.size() != expected_frames) {
    return reject(WireError::kBadFrameCount,
                  std::to_string(frames.size()) + " frames for " + std::string(to_string(type)));
  }
  std::span<const std::byte> payload =
      frames.size() == 2 ? frames[1] : std::span<const std::byte>{};
  const auto payload_bytes = load_le<std::uint32_t>(&h[kPayloadBytesOffset]);
  if (payload_bytes != payload.size() || !payload_fits(kind, payload)) {
    return reject(WireError::kBadPayloadLength, "length field " + std::to_string(payload_bytes) +
                                                    ", payload frame of " +
                                                    std::to_string(payload.size()) + " bytes for " +
                                                    std::string(to_string(type)));
  }
  const std::uint32_t crc = crc32c_extend(crc32c_extend(0, h.first(kChecksumOffset)), payload);
  if (crc != load_le<std::uint32_t>(&h[kChecksumOffset])) {
    return reject(WireError::kBadChecksum, std::string(to_string(type)) + " frame corrupted");
  }
  const auto iteration = load_le<std::int64_t>(&h[kIterationOffset]);
  if (iteration < 0) {
    return reject(WireError::kBadHeader, "negative iteration " + std::to_string(iteration));
  }
  const auto sender = load_le<PeerId>(&h[kSenderOffset]);
  if (sender >= peers.run().peer_count) {
    return reject(WireError::kUnknownSender, "sender " + std::to_string(sender) + " in a run of " +
                                                 std::to_string(peers.run().peer_count) + " peers");
  }
  if (!peers.is_sender(sender)) {
    return reject(
        WireError::kNotNeighbour,
        "peer " + std::to_string(sender) + " may not send to peer " + std::to_string(peers.self()));
  }
  if (authenticated_sender && *authenticated_sender != sender) {
    const bool known = *authenticated_sender < peers.run().peer_count;
    return reject(
        WireError::kNotAuthenticated,
        (known ? "a frame over the connection of peer " + std::to_string(*authenticated_sender) +
                     "'s key names peer "
               : std::string("a frame over a connection with no proven key names peer ")) +
            std::to_string(sender) + " as its sender");
  }
  DecodedMessage message{type, sender, iteration, {}, payload, kind};
  if (kind == PayloadKind::kHello) {
    message.hello = {load_le<std::uint64_t>(payload.data()),
                     load_le<std::uint32_t>(payload.data() + 8)};
    if (message.hello != peers.run()) {
      return reject(WireError::kWrongRun, "peer " + std::to_string(sender) + " runs config " +
                                              std::to_string(message.hello.run_id) + " with " +
                                              std::to_string(message.hello.peer_count) +
                                              " peers, this run is " +
                                              std::to_string(peers.run().run_id) + " with " +
                                              std::to_string(peers.run().peer_count));
    }
  }
  return message;
}

}  // namespace fastk::node::wire
