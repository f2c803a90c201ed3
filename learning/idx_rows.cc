#include "learning/idx_rows.h"

namespace fastk::learning {
namespace {

// Features of the rows `rows` of an IDX pair, scaled and (optionally) standardised.
std::vector<float> normalised_rows(const IdxPair& pair, std::span<const std::int64_t> rows,
                                   const std::optional<Standardization>& standardization) {
  const std::size_t dim = std::size_t(pair.shape.dim());
  std::vector<float> out(rows.size() * dim);
  float* to = out.data();
  // Row by row with plain loops the compiler vectorises: this was most of a peer's start-up.
  for (std::int64_t r : rows) {
    const std::uint8_t* from = pair.pixels.data() + std::size_t(r) * dim;
    if (standardization) {
      for (std::size_t i = 0; i < dim; ++i) to[i] = standardization->apply(scaled_pixel(from[i]));
    } else {
      for (std::size_t i = 0; i < dim; ++i) to[i] = scaled_pixel(from[i]);
    }
    to += dim;
  }
  return out;
}

}  // namespace

IdxPair read_idx_limited(const std::string& images, const std::string& labels, std::int64_t limit) {
  IdxPair pair = read_idx_bytes(images, labels);
  if (limit > 0 && limit < std::int64_t(pair.labels.size())) pair.labels.resize(std::size_t(limit));
  return pair;
}

std::optional<Standardization> idx_standardization(const DataSpec& spec, const IdxPair& train) {
  if (!standardizes(spec.normalization)) return std::nullopt;
  Moments moments;
  for (std::uint8_t b : train.pixels.first(train.labels.size() * std::size_t(train.shape.dim()))) {
    moments.add(scaled_pixel(float(b)));
  }
  return Standardization(moments);
}

Dataset idx_rows(const IdxPair& pair, std::span<const std::int64_t> rows,
                 const std::optional<Standardization>& standardization, std::string name) {
  Dataset set;
  set.name = std::move(name);
  set.classes = pair.classes;
  set.shape = pair.shape;
  set.dim = pair.shape.dim();
  set.features = normalised_rows(pair, rows, standardization);
  set.labels.reserve(rows.size());
  for (std::int64_t r : rows) set.labels.push_back(pair.labels[std::size_t(r)]);
  set.source_rows.assign(rows.begin(), rows.end());
  return set;
}

}  // namespace fastk::learning
