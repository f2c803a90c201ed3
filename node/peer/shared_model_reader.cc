#include "node/peer/shared_model_reader.h"

#include <iostream>

#include "node/wire/model_slot_payload.h"

namespace fastk::node::peer {

SharedModelReader::SharedModelReader(std::uint64_t run_id, int self, std::size_t floats,
                                     std::map<int, std::string> names)
    : self_(self), names_(std::move(names)) {
  if (!names_.empty()) {
    models_ = std::make_unique<transport::NeighbourModels>(run_id, self, floats);
  }
}

consensus::Params SharedModelReader::take(int from, wire::MessageType type,
                                          std::span<const std::byte> payload) {
  const wire::ModelSlotRef ref = wire::read_model_slot(payload);
  transport::NeighbourModels::Taken taken;
  const auto name = names_.find(from);
  if (!models_) {
    taken.problem = "this peer does not use shared memory ([cluster] local_transport)";
  } else if (name == names_.end()) {
    taken.problem = "peer " + std::to_string(from) + " is not a neighbour";
  } else {
    taken = models_->take(static_cast<wire::PeerId>(from), name->second, ref);
  }
  if (taken.outcome == transport::NeighbourModels::Outcome::kLapped) {
    ++lapped_;
  } else if (taken.outcome == transport::NeighbourModels::Outcome::kInvalid) {
    ++bad_;
    if (logged_.insert({from, type}).second) {
      std::cerr << "peer " << self_ << ": dropped a " << wire::to_string(type) << " from peer "
                << from << ": " << taken.problem << std::endl;
    }
  }
  return taken.params;
}

}  // namespace fastk::node::peer
