#include "node/wire/encoder.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "node/wire/byte_order.h"
#include "node/wire/checksum.h"

namespace fastk::node::wire {

HeaderBytes encode_header(const HeaderFields& fields, std::span<const std::byte> payload) {
  if (payload.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("wire: payload of " + std::to_string(payload.size()) +
                            " bytes exceeds the format's 4 GiB - 1 limit");
  }
  if (fields.iteration < 0) {
    throw std::invalid_argument("wire: negative iteration tag " + std::to_string(fields.iteration));
  }
  HeaderBytes h{};
  std::copy(kMagic.begin(), kMagic.end(), h.begin() + kMagicOffset);
  h[kVersionOffset] = std::byte{kVersion};
  h[kTypeOffset] = static_cast<std::byte>(fields.type);
  h[kKindOffset] = static_cast<std::byte>(fields.kind);
  h[kReservedOffset] = std::byte{0};
  store_le<std::uint32_t>(&h[kSenderOffset], fields.sender);
  store_le<std::uint32_t>(&h[kPayloadBytesOffset], static_cast<std::uint32_t>(payload.size()));
  store_le<std::int64_t>(&h[kIterationOffset], fields.iteration);
  std::uint32_t crc = crc32c_extend(0, std::span(h).first(kChecksumOffset));
  store_le<std::uint32_t>(&h[kChecksumOffset], crc32c_extend(crc, payload));
  return h;
}

EncodedMessage encode_hello(MessageType type, PeerId sender, std::int64_t iteration,
                            const HelloInfo& hello) {
  if (type != MessageType::kHello && type != MessageType::kHelloAck) {
    throw std::invalid_argument("wire: encode_hello needs kHello or kHelloAck");
  }
  auto bytes = std::make_shared<std::array<std::byte, kHelloPayloadBytes>>();
  store_le<std::uint64_t>(bytes->data(), hello.run_id);
  store_le<std::uint32_t>(bytes->data() + 8, hello.peer_count);
  std::span<const std::byte> view(*bytes);
  return {encode_header({type, PayloadKind::kHello, sender, iteration}, view),
          {std::move(bytes), view},
          true};
}

EncodedMessage encode_model(PeerId sender, std::int64_t iteration,
                            std::shared_ptr<const void> owner, std::span<const float> parameters) {
  std::span<const std::byte> view = std::as_bytes(parameters);
  return {encode_header({MessageType::kModel, PayloadKind::kFloat32, sender, iteration}, view),
          {std::move(owner), view},
          true};
}

EncodedMessage encode_averaging(MessageType type, PeerId sender, std::int64_t iteration,
                                std::shared_ptr<const void> owner, std::span<const float> values) {
  if (type != MessageType::kAverageRequest && type != MessageType::kAverageReply) {
    throw std::invalid_argument("wire: encode_averaging needs kAverageRequest or kAverageReply");
  }
  std::span<const std::byte> view = std::as_bytes(values);
  return {encode_header({type, PayloadKind::kFloat32, sender, iteration}, view),
          {std::move(owner), view},
          true};
}

EncodedMessage encode_bye(PeerId sender, std::int64_t iteration) {
  return {encode_header({MessageType::kBye, PayloadKind::kNone, sender, iteration}, {}), {}, false};
}

}  // namespace fastk::node::wire
