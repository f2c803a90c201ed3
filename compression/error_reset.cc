#include "compression/error_reset.h"

#include <stdexcept>

namespace fastk::compression {

void check(const ErrorReset& reset) {
  if (reset.every < 1) throw std::invalid_argument("compression.reset_every must be >= 1");
  switch (reset.spec.kind) {
    case Kind::kFloat16:
    case Kind::kInt8:
      break;
    case Kind::kQsgd:
    case Kind::kTopK:
    case Kind::kRandomK:
      // A sparsifier would leave (1 - fraction) of the residual where it was, and compressed
      // gossip sends a QSGD difference divided by its tau (about 21 for the quickstart's
      // MLP): neither resets anything.
      throw std::invalid_argument(
          "compression.reset_kind must be fp16 or int8: a sparsifier, or QSGD divided by its "
          "tau, moves too little of the residual to reset it");
  }
  if (!(reset.consensus_step > 0 && reset.consensus_step <= 1)) {
    throw std::invalid_argument("compression.reset_consensus_step must be in (0, 1]");
  }
  check(reset.spec);
}

}  // namespace fastk::compression
