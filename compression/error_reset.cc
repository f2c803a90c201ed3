#include "compression/error_reset.h"

#include <stdexcept>

namespace fastk::compression {

void check(const ErrorReset& reset) {
  if (reset.every < 1) throw std::invalid_argument("compression.reset_every must be >= 1");
  switch (reset.spec.kind) {
    case Kind::kFloat16:
    case Kind::kInt8:
    case Kind::kQsgd:
      break;
    case Kind::kTopK:
    case Kind::kRandomK:
      // It would leave (1 - fraction) of the residual where it was: no reset at all.
      throw std::invalid_argument(
          "compression.reset_kind must be fp16, int8 or qsgd: a sparsifier keeps too little of "
          "the residual to reset it");
  }
  if (!(reset.consensus_step > 0 && reset.consensus_step <= 1)) {
    throw std::invalid_argument("compression.reset_consensus_step must be in (0, 1]");
  }
  check(reset.spec);
}

}  // namespace fastk::compression
