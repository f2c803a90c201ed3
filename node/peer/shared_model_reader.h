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

#include "consensus/params.h"
#include "node/transport/shared_models.h"

namespace fastk::node::peer {

class SharedModelReader {
 public:
  // `names`: each neighbour's slot object; empty when this peer does not use shared memory.
  SharedModelReader(std::uint64_t run_id, int self, std::size_t floats,
                    std::map<int, std::string> names);

  // The model, or null (lapped or bad).
  consensus::Params take(int from, std::span<const std::byte> payload);
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
  std::set<int> logged_;                                // senders of a bad one, logged
  std::uint64_t lapped_ = 0;
  std::uint64_t bad_ = 0;
};

}  // namespace fastk::node::peer
