// The rows of IDX data sets as floats, normalised as load_data normalises whole arrays: the
// arithmetic both share, one value at a time, so that a peer's rows (load_train_rows, the
// test set it converts late) are bit-identical to what the simulator's load_data gives.
// Internal to learning/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "learning/data_sources.h"

namespace fastk::learning {

inline bool is_idx(DatasetKind kind) {
  return kind == DatasetKind::kFashionMnist || kind == DatasetKind::kMnist;
}

inline float scaled_pixel(float raw) { return raw * (1.0f / 255.0f); }

struct Moments {
  double sum = 0, sum_squares = 0;
  std::size_t count = 0;
  void add(float x) { sum += x, sum_squares += double(x) * x, ++count; }
};

struct Standardization {
  double mean = 0, inverse_std = 1;
  explicit Standardization(const Moments& m) {
    mean = m.sum / double(m.count);
    const double variance = std::max(m.sum_squares / double(m.count) - mean * mean, 0.0);
    inverse_std = variance > 0 ? 1.0 / std::sqrt(variance) : 1.0;
  }
  float apply(float x) const { return float((x - mean) * inverse_std); }
};

// Whether `n` subtracts a mean and divides by a standard deviation. IDX images have one
// channel, so per_channel is standardize for them.
inline bool standardizes(Normalization n) {
  return n == Normalization::kStandardize || n == Normalization::kPerChannel;
}

// One IDX pair (files `images`, `labels`), its labels cut to `limit` when that is positive.
IdxPair read_idx_limited(const std::string& images, const std::string& labels, std::int64_t limit);

// The standardisation load_data applies (none unless data.normalization asks for it), from
// the training pixels after train_limit.
std::optional<Standardization> idx_standardization(const DataSpec& spec, const IdxPair& train);

// The rows `rows` of `pair`, in that order, scaled and (optionally) standardised.
Dataset idx_rows(const IdxPair& pair, std::span<const std::int64_t> rows,
                 const std::optional<Standardization>& standardization, std::string name);

}  // namespace fastk::learning
