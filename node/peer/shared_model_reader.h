// The models a SHARED_MODEL names ([cluster] local_transport = "shm"): held in the sending
// neighbour's shared memory (node/transport/shared_models.h) and read in place. A reference to
// a slot the neighbour rewrote since (a newer model is on its way) is counted as lapped; a bad
// one (not a neighbour, not shared, a forged slot) is counted and logged once per sender.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "consensus/params.h"
#include "node/transport/shared_models.h"
#include "node/wire/format.h"

namespace fastk::node::peer {

class SharedModelReader {
 public:
  // `names`: each neighbour's slot object; empty when this peer does not use shared memory.
  SharedModelReader(std::uint64_t run_id, int self, std::size_t floats,
                    std::map<int, std::string> names);

  // The vector a shared-memory reference of type `type` (SHARED_MODEL, SHARED_AVERAGE_REQUEST,
  // SHARED_AVERAGE_REPLY) points at, or null (lapped or bad; a bad one is logged by its type).
  consensus::Params take(int from, wire::MessageType type, std::span<const std::byte> payload);
  // `from` restarted (its HELLO came mid-run): its slots are mapped afresh on next use.
  void forget(int from) {
    if (models_) models_->forget(static_cast<wire::PeerId>(from));
  }
  std::uint64_t lapped() const { return lapped_; }
  std::uint64_t bad() const { return bad_; }

 private:
  int self_;
  std::map<int, std::string> names_;
  std::unique_ptr<transport::NeighbourModels> models_;  // null without shared memory
  std::set<std::pair<int, wire::MessageType>> logged_;  // bad ones logged: once per sender, type
  std::uint64_t lapped_ = 0;
  std::uint64_t bad_ = 0;
};

}  // namespace fastk::node::peer
