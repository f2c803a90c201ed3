#include "node/metrics/mean_model.h"

#include <stdexcept>

namespace fastk::node::metrics {

MeanModel mean_model(std::span<const std::span<const float>> models) {
  if (models.empty()) throw std::invalid_argument("mean_model: no models");
  const std::size_t p = models.front().size();
  const double n = static_cast<double>(models.size());
  std::vector<double> sum(p, 0.0);
  for (const auto& x : models) {
    if (x.size() != p) throw std::invalid_argument("mean_model: models differ in size");
    for (std::size_t j = 0; j < p; ++j) sum[j] += x[j];
  }
  MeanModel out;
  out.mean.resize(p);
  for (std::size_t j = 0; j < p; ++j) out.mean[j] = static_cast<float>(sum[j] / n);
  for (const auto& x : models) {
    for (std::size_t j = 0; j < p; ++j) {
      const double d = x[j] - sum[j] / n;
      out.consensus_distance += d * d;
    }
  }
  out.consensus_distance /= n;
  return out;
}

}  // namespace fastk::node::metrics
