// Encoding of wire messages (node/WIRE.md). A message is a header frame plus at most one
// payload frame; the payload is never copied: the encoder checksums the caller's buffer and
// keeps a reference to it, so one encoded MODEL can go to every neighbour.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "node/wire/format.h"

namespace fastk::node::wire {

using HeaderBytes = std::array<std::byte, kHeaderBytes>;

// Read-only bytes and whatever keeps them alive. The bytes must not change while any copy of
// `owner` exists: the transport may still be sending them.
struct SharedBytes {
  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
};

// A message ready to send to any number of peers.
struct EncodedMessage {
  HeaderBytes header;
  SharedBytes payload;  // empty (no payload frame) for PayloadKind::kNone
  bool has_payload_frame = false;
};

// The header fields a sender chooses; encode_header derives the rest (length, checksum).
struct HeaderFields {
  MessageType type = MessageType::kBye;
  PayloadKind kind = PayloadKind::kNone;
  PeerId sender = 0;
  std::int64_t iteration = 0;
};

// Throws std::length_error when the payload exceeds the format's 4 GiB - 1 limit, and
// std::invalid_argument for a negative iteration (both are programming errors).
HeaderBytes encode_header(const HeaderFields& fields, std::span<const std::byte> payload);

// `type` is kHello or kHelloAck.
EncodedMessage encode_hello(MessageType type, PeerId sender, std::int64_t iteration,
                            const HelloInfo& hello);
// `parameters` must stay unchanged while `owner` lives (see SharedBytes): send the next
// iteration's model from another buffer. With a null owner the transport copies the payload.
EncodedMessage encode_model(PeerId sender, std::int64_t iteration,
                            std::shared_ptr<const void> owner, std::span<const float> parameters);
EncodedMessage encode_bye(PeerId sender, std::int64_t iteration);
// AVERAGE_REQUEST or AVERAGE_REPLY (`type`), whose float32 payload is kept like a model's;
// a reply with no values declines.
EncodedMessage encode_averaging(MessageType type, PeerId sender, std::int64_t iteration,
                                std::shared_ptr<const void> owner, std::span<const float> values);

}  // namespace fastk::node::wire
