// Payload kind 4 of node/WIRE.md: where in the sender's shared memory a SHARED_MODEL's
// parameters are (local_transport = "shm", node/transport/shared_models.h). Layout,
// little-endian: u32 slot, u32 reserved (0), u64 generation (> 0), u64 float count.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "node/wire/encoder.h"

namespace fastk::node::wire {

inline constexpr std::size_t kModelSlotBytes = 24;

struct ModelSlotRef {
  std::uint32_t slot = 0;
  std::uint64_t generation = 0;  // which write of the slot; 0 never names a model
  std::uint64_t floats = 0;      // model size, checked against the receiver's
  bool operator==(const ModelSlotRef&) const = default;
};

// Whether `payload` has the layout above (exact size, reserved zero, generation > 0).
bool model_slot_fits(std::span<const std::byte> payload);
// Reads a payload for which model_slot_fits() holds.
ModelSlotRef read_model_slot(std::span<const std::byte> payload);

// `keep_alive` (may be null) is held while the message waits in the runtime's queue of
// refused sends, so the slot is not rewritten before it is handed to ZeroMQ. (ZeroMQ copies
// the 24 bytes; a slot rewritten after that is seen by the reader as lapped.)
// `type`: SHARED_MODEL, SHARED_AVERAGE_REQUEST or SHARED_AVERAGE_REPLY (any other throws
// std::invalid_argument).
EncodedMessage encode_shared_model(PeerId sender, std::int64_t iteration, const ModelSlotRef& ref,
                                   std::shared_ptr<const void> keep_alive,
                                   MessageType type = MessageType::kSharedModel);

}  // namespace fastk::node::wire
