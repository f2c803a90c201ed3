// The code that one block of a neighbourhood is encoded and decoded with under a share scheme
// (mds, crc, cyclic_mds; coding/neighbourhood_code.h): a communication-efficient code whose
// members and partitions are the block's members in block order. Every peer builds the same
// code for a block size from the same seeds, so an encoder and its decoder agree without
// exchanging the matrix.
#pragma once

#include <memory>

#include "coding/communication_efficient_code.h"
#include "coding/neighbourhood_code.h"

namespace fastk::coding {

// Throws std::invalid_argument when `spec` sends no shares (none, frc), when the block is too
// small for the scheme, or for a block with too many subsets to choose a code from. Codes are
// immutable and built once per thread for each (scheme, members, s, m): `fastk sim` builds
// every peer in one process, and choosing a code can take seconds for a large block.
std::shared_ptr<const CommunicationEfficientCode> make_share_code(const NeighbourhoodCodeSpec& spec,
                                                                  int members);

}  // namespace fastk::coding
