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

Dataset select_rows(const Dataset& data, std::span<const std::int64_t> indices) {
  Dataset out;
  out.name = data.name;
  out.dim = data.dim;
  out.classes = data.classes;
  out.shape = data.shape;
  out.features.reserve(indices.size() * std::size_t(data.dim));
  for (std::int64_t i : indices) {
    auto row = data.row(i);
    out.features.insert(out.features.end(), row.begin(), row.end());
    if (!data.labels.empty()) out.labels.push_back(data.labels[std::size_t(i)]);
    if (!data.targets.empty()) out.targets.push_back(data.targets[std::size_t(i)]);
    out.source_rows.push_back(data.source_row(i));
  }
  return out;
}

void truncate(Dataset& data, std::int64_t limit) {
  if (limit <= 0 || limit >= data.size()) return;
  data.features.resize(std::size_t(limit) * data.dim);
  if (!data.labels.empty()) data.labels.resize(std::size_t(limit));
  if (!data.targets.empty()) data.targets.resize(std::size_t(limit));
  if (!data.source_rows.empty()) data.source_rows.resize(std::size_t(limit));
}

}  // namespace fastk::learning
