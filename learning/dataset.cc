#include "learning/dataset.h"

#include <algorithm>

namespace fastk::learning {

void gather_features(const BatchView& batch, std::vector<float>& features) {
  const Dataset& data = *batch.data;
  const std::size_t needed = std::size_t(batch.size()) * data.dim;
  if (features.size() < needed) features.resize(needed);
  for (std::int64_t b = 0; b < batch.size(); ++b) {
    std::span<const float> row = data.row(batch.indices[b]);
    std::copy(row.begin(), row.end(), features.begin() + b * data.dim);
  }
}

void truncate(Dataset& data, std::int64_t limit) {
  if (limit <= 0 || limit >= data.size()) return;
  data.features.resize(std::size_t(limit) * data.dim);
  if (!data.labels.empty()) data.labels.resize(std::size_t(limit));
  if (!data.targets.empty()) data.targets.resize(std::size_t(limit));
}

}  // namespace fastk::learning
