// The neighbourhood disagreement DBW-C weighs (docs/protocol.md §5.5.5):
//   nu2 = q / (q - 1) * ||own - z||^2,   z = (own + sum of the q - 1 models) / q,
// the spread of the q models of an update around their plain mean. One vectorised pass over
// the models, in float (an estimate, not part of any model's bits); no scratch vector.
#pragma once

#include <span>
#include <vector>

namespace fastk::consensus {

// 0 when `models` is empty. Every span has own.size() values.
double neighbourhood_disagreement(std::span<const float> own,
                                  const std::vector<std::span<const float>>& models);

// |a - b|, in double, summed in four interleaved partial sums: a fixed order, so the same bits
// in every runtime (a robust rule's radius depends on it), and additions that do not wait on
// each other.
double distance_between(std::span<const float> a, std::span<const float> b);

}  // namespace fastk::consensus
