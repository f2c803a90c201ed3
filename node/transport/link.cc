#include "node/transport/link.h"

#include <cstring>

namespace fastk::node::transport {

ReceivedMessage::ReceivedMessage(const wire::DecodedMessage& decoded, wire::SharedBytes payload)
    : type_(decoded.type),
      sender_(decoded.sender),
      iteration_(decoded.iteration),
      hello_(decoded.hello),
      kind_(decoded.kind),
      payload_(std::move(payload)) {
  if (wire::payload_kind_of(type_) != wire::PayloadKind::kFloat32) return;
  const std::span<const std::byte> bytes = payload_.bytes;
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(float) != 0) {
    aligned_copy_.resize(bytes.size() / sizeof(float));
    std::memcpy(aligned_copy_.data(), bytes.data(), aligned_copy_.size() * sizeof(float));
  }
}

std::span<const float> ReceivedMessage::parameters() const {
  if (wire::payload_kind_of(type_) != wire::PayloadKind::kFloat32) return {};
  if (!aligned_copy_.empty()) return aligned_copy_;
  return {reinterpret_cast<const float*>(payload_.bytes.data()),
          payload_.bytes.size() / sizeof(float)};
}

}  // namespace fastk::node::transport
