#include "consensus/gradient_stats.h"

#include <algorithm>
#include <stdexcept>

namespace fastk::consensus {

void MicroBatchAccumulator::add(std::span<const float> micro_gradient) {
  if (micro_gradient.size() != sum_.size()) {
    throw std::invalid_argument("MicroBatchAccumulator: gradient has " +
                                std::to_string(micro_gradient.size()) + " values, expected " +
                                std::to_string(sum_.size()));
  }
  double squared = 0;
  for (std::size_t p = 0; p < sum_.size(); ++p) {
    const double v = micro_gradient[p];
    sum_[p] += v;
    squared += v * v;
  }
  sum_squared_norms_ += squared;
  ++count_;
}

GradientStats MicroBatchAccumulator::finish(std::span<float> mean) const {
  GradientStats stats;
  if (count_ == 0) return stats;
  const double r = count_;
  double mean_squared_norm = 0;
  for (std::size_t p = 0; p < sum_.size(); ++p) {
    const double m = sum_[p] / r;
    mean[p] = static_cast<float>(m);
    mean_squared_norm += m * m;
  }
  if (count_ < 2) return stats;
  // sum ||g_m - g_bar||^2 = sum ||g_m||^2 - r ||g_bar||^2
  const double spread = std::max(0.0, sum_squared_norms_ - r * mean_squared_norm);
  stats.variance = spread / (r * (r - 1));
  stats.squared_norm = std::max(0.0, mean_squared_norm - stats.variance);
  stats.valid = true;
  return stats;
}

}  // namespace fastk::consensus
