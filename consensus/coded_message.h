// The coded part of a message in a coded neighbourhood (coding/neighbourhood_code.h): what a
// member sends a neighbour next to its model when [coding] is on.
#pragma once

#include <memory>
#include <vector>

#include "consensus/params.h"
#include "topology/graph.h"

namespace fastk::consensus {

using topology::PeerId;

struct CodedGradient {
  // Partitions summed in `gradient`: one block of the receiver's closed neighbourhood.
  std::vector<PeerId> covers;
  // Dynamic roles: the block of the sender's neighbourhood the receiver covers from now on
  // (empty: unchanged). Messages say what they encode, so a late role map never makes a
  // wrong sum: at worst a block goes uncovered for a step (flagged as not decodable).
  std::vector<PeerId> role;
  double compute_s = 0;  // the sender's gradient time at this iteration (straggler estimates)
  Params gradient;       // sum of the covered partitions' mini-batch mean gradients
};

using CodedPart = std::shared_ptr<const CodedGradient>;

}  // namespace fastk::consensus
