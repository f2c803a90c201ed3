// The mean of the peers' models and their consensus distance: what both runtimes evaluate
// (the simulator over live peers, `fastk run` over the peers' snapshots).
#pragma once

#include <span>
#include <vector>

namespace fastk::node::metrics {

struct MeanModel {
  std::vector<float> mean;        // accumulated in double, rounded once
  double consensus_distance = 0;  // (1/n) sum_i ||x_i - mean||^2
};

// `models` must be non-empty and of equal size.
MeanModel mean_model(std::span<const std::span<const float>> models);

}  // namespace fastk::node::metrics
