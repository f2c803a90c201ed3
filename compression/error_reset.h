// Error reset for compressed gossip (after CSER, Xie et al. 2020; docs/compression.md §8).
// Under CHOCO's error feedback the residual x - x_hat (what a peer's neighbours do not know of
// its model yet) is carried from gossip to gossip and shrinks only as fast as the gossip's
// compressor lets it. With error reset, every `every`-th gossip sends the difference with a
// second, finer compressor instead, and mixes with its own consensus step: the residual is
// reset to what that compressor drops, and how far a peer's model drifts from what its
// neighbours know is bounded by what `every` gossips accumulate.
#pragma once

#include <cstdint>
#include <optional>

#include "compression/compressor.h"

namespace fastk::compression {

struct ErrorReset {
  std::int64_t every = 1;               // gossips between resets, >= 1
  CompressorSpec spec{Kind::kFloat16};  // fp16 or int8: the others move too little
  double consensus_step = 1.0;          // gamma of a reset gossip, in (0, 1]
};

// Throws std::invalid_argument naming what is out of range (as compression.reset_* keys).
void check(const ErrorReset& reset);

// Whether gossip `gossip` (counted from 0) resets: the every-th, the 2 every-th, ...
inline bool resets(const std::optional<ErrorReset>& reset, std::int64_t gossip) {
  return reset && (gossip + 1) % reset->every == 0;
}

}  // namespace fastk::compression
