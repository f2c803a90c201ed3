// top_k and random_k: k of the values and their indices, nothing else.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "compression/compressors.h"
#include "learning/random.h"

namespace fastk::compression {
namespace {

Compressed keep(std::span<const float> v, std::vector<std::uint32_t> indices, Kind kind) {
  std::sort(indices.begin(), indices.end());
  Compressed c;
  c.kind = kind;
  c.length = static_cast<std::uint32_t>(v.size());
  c.values.reserve(indices.size());
  for (std::uint32_t i : indices) c.values.push_back(v[i]);
  c.indices = std::move(indices);
  return c;
}

}  // namespace

Compressed compress_top_k(std::span<const float> v, std::uint32_t k) {
  k = std::min<std::uint32_t>(k, static_cast<std::uint32_t>(v.size()));
  if (k == 0) return keep(v, {}, Kind::kTopK);
  // The k-th largest magnitude, found among the magnitudes alone (contiguous floats: several
  // times faster than selecting indices through a comparator that looks each value up).
  std::vector<float> magnitude(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) magnitude[i] = std::fabs(v[i]);
  std::nth_element(magnitude.begin(), magnitude.begin() + (k - 1), magnitude.end(),
                   std::greater<float>());
  const float threshold = magnitude[k - 1];
  const auto above = static_cast<std::size_t>(
      std::count_if(magnitude.begin(), magnitude.end(), [&](float m) { return m > threshold; }));
  // Every value above the threshold, then those at it in index order until k: ties go to the
  // lower index, so the choice is deterministic.
  std::size_t ties = k - above;
  std::vector<std::uint32_t> indices;
  indices.reserve(k);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float m = std::fabs(v[i]);
    if (m < threshold || (m == threshold && ties == 0)) continue;
    if (m == threshold) --ties;
    indices.push_back(static_cast<std::uint32_t>(i));
  }
  return keep(v, std::move(indices), Kind::kTopK);
}

Compressed compress_random_k(std::span<const float> v, std::uint32_t k, std::uint64_t seed) {
  std::vector<std::uint32_t> order(v.size());
  std::iota(order.begin(), order.end(), 0u);
  k = std::min<std::uint32_t>(k, static_cast<std::uint32_t>(v.size()));
  learning::Rng rng(seed);
  for (std::uint32_t i = 0; i < k; ++i) {  // the first k steps of a Fisher-Yates shuffle
    const auto j = i + static_cast<std::uint32_t>(rng.below(v.size() - i));
    std::swap(order[i], order[j]);
  }
  order.resize(k);
  return keep(v, std::move(order), Kind::kRandomK);
}

}  // namespace fastk::compression
