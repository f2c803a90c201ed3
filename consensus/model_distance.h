// What the first-order validation (variants/first_order_validated.cc) reads of each model it
// scores, in one pass: the slope of the loss toward the model and the squared distance to it.
#pragma once

#include <span>

namespace fastk::consensus {

struct SlopeAndDistance {
  double slope = 0;    // <g, model - own>
  double squared = 0;  // |model - own|^2
};

// All three spans have one length. The same bits on every CPU and instruction-set level:
// fixed lanes summed in a fixed order (model_distance.cc).
SlopeAndDistance slope_and_squared_distance(std::span<const float> g, std::span<const float> own,
                                            std::span<const float> model);

}  // namespace fastk::consensus
