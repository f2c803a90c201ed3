// The mean of the peers' models and their consensus distance: what both runtimes evaluate
// (the simulator over live peers, `fastk run` over the peers' snapshots). With an [attack],
// the mean of the honest peers' models: an attacker's model is not what the run learned.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "consensus/attack.h"

namespace fastk::node::metrics {

struct MeanModel {
  std::vector<float> mean;        // accumulated in double, rounded once
  double consensus_distance = 0;  // (1/n) sum_i ||x_i - mean||^2
};

// `models` must be non-empty and of equal size.
MeanModel mean_model(std::span<const std::span<const float>> models);

// Whether `peer`'s model is part of the mean model: it is not an attacker.
inline bool in_mean_model(const std::optional<consensus::AttackSpec>& attack, int peer) {
  return !attack || !attack->attacker(peer);
}

}  // namespace fastk::node::metrics
