#include "node/wire/model_slot_payload.h"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "node/wire/byte_order.h"

namespace fastk::node::wire {

bool model_slot_fits(std::span<const std::byte> payload) {
  return payload.size() == kModelSlotBytes && load_le<std::uint32_t>(payload.data() + 4) == 0 &&
         load_le<std::uint64_t>(payload.data() + 8) != 0;
}

ModelSlotRef read_model_slot(std::span<const std::byte> payload) {
  return {load_le<std::uint32_t>(payload.data()), load_le<std::uint64_t>(payload.data() + 8),
          load_le<std::uint64_t>(payload.data() + 16)};
}

EncodedMessage encode_shared_model(PeerId sender, std::int64_t iteration, const ModelSlotRef& ref,
                                   std::shared_ptr<const void> keep_alive, MessageType type) {
  if (payload_kind_of(type) != PayloadKind::kModelSlot) {
    throw std::invalid_argument("wire: encode_shared_model needs a shared type, not " +
                                std::string(to_string(type)));
  }
  struct Owned {
    std::array<std::byte, kModelSlotBytes> bytes{};
    std::shared_ptr<const void> keep_alive;
  };
  auto owned = std::make_shared<Owned>();
  owned->keep_alive = std::move(keep_alive);
  std::byte* p = owned->bytes.data();
  store_le<std::uint32_t>(p, ref.slot);
  store_le<std::uint32_t>(p + 4, 0);
  store_le<std::uint64_t>(p + 8, ref.generation);
  store_le<std::uint64_t>(p + 16, ref.floats);
  std::span<const std::byte> view(owned->bytes);
  return {encode_header({type, PayloadKind::kModelSlot, sender, iteration}, view),
          {std::move(owned), view},
          true};
}

}  // namespace fastk::node::wire
