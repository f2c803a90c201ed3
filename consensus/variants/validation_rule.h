// What the two scorers of [consensus] validate share (docs/protocol.md §4.9): the test a
// score must pass and the order of the update they need. validated.cc scores by losses on a
// validation batch (StartValidation), first_order_validated.cc by the peer's own gradient.
#pragma once

#include <cmath>
#include <stdexcept>

#include "consensus/protocol_config.h"

namespace fastk::consensus {

// Whether a model with `loss` (the distance penalty included) passes against the own model's
// `own`: finite, and no worse than `margin` above it. A peer whose own loss is not finite
// keeps every finite one: they are its way back.
inline bool passes_validation(double own, double loss, double margin) {
  return std::isfinite(loss) && (!std::isfinite(own) || own - loss >= -margin);
}

// Both score against x_i(k), the model the gradient was taken at: with adapt_then_combine the
// neighbours' models have taken their step and the own one has not, which would loosen the
// test by one SGD step.
inline void check_validation_order(const ProtocolConfig& config) {
  if (config.order != UpdateOrder::kCombineThenAdapt) {
    throw std::invalid_argument(
        "consensus.validate needs order = \"combine_then_adapt\": with adapt_then_combine "
        "the neighbours' models have stepped and the own one has not");
  }
}

}  // namespace fastk::consensus
