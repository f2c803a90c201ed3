// A data set held in memory, and views of mini-batches of it. Features are float, row-major
// (one sample per row), so that a batch gathered into a buffer is directly the column-major
// (dim x batch) matrix the models multiply with.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fastk::learning {

// Layout of one sample: channels x height x width (CHW), flattened. Vectors: 1 x 1 x dim.
struct SampleShape {
  int channels = 1;
  int height = 1;
  int width = 1;
  int dim() const { return channels * height * width; }
};

struct Dataset {
  std::string name;
  int dim = 0;
  int classes = 0;  // 0 for regression data (targets instead of labels)
  SampleShape shape;
  std::vector<float> features;       // size() x dim, row-major
  std::vector<std::int32_t> labels;  // classification: in [0, classes)
  std::vector<float> targets;        // regression: one target per sample
  // A selection of a larger set (a peer's shard): the index each row has in that set, which
  // keys its augmentation (augmentation.h) as in the whole set the simulator holds. Empty:
  // row i is sample i.
  std::vector<std::int64_t> source_rows;
  std::int64_t source_row(std::int64_t i) const {
    return source_rows.empty() ? i : source_rows[std::size_t(i)];
  }
  std::int64_t size() const { return dim == 0 ? 0 : std::int64_t(features.size()) / dim; }
  std::span<const float> row(std::int64_t i) const {
    return {features.data() + i * dim, std::size_t(dim)};
  }
};

struct TrainTest {
  Dataset train;
  Dataset test;
};

// The rows `indices` of `data`. Non-owning: both must outlive the view.
struct BatchView {
  const Dataset* data = nullptr;
  std::span<const std::int64_t> indices;
  std::int64_t size() const { return std::int64_t(indices.size()); }
};

// A copy of the rows `indices` of `data` (features, labels, targets), in that order, with
// each row's source_row.
Dataset select_rows(const Dataset& data, std::span<const std::int64_t> indices);

// Copies the batch's features into `features` (batch x dim row-major, resized only when it
// grows) so that a model can multiply with it in place.
void gather_features(const BatchView& batch, std::vector<float>& features);

// Keeps the first `limit` samples (limit <= 0 or >= size: unchanged).
void truncate(Dataset& data, std::int64_t limit);

}  // namespace fastk::learning
