// top_k and random_k: k of the values and their indices, nothing else.
#include <algorithm>
#include <cmath>
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
  std::vector<std::uint32_t> order(v.size());
  std::iota(order.begin(), order.end(), 0u);
  k = std::min<std::uint32_t>(k, static_cast<std::uint32_t>(v.size()));
  // Largest magnitude first; ties go to the lower index, so the choice is deterministic.
  std::nth_element(order.begin(), order.begin() + k, order.end(),
                   [&](std::uint32_t a, std::uint32_t b) {
                     const float fa = std::fabs(v[a]), fb = std::fabs(v[b]);
                     return fa != fb ? fa > fb : a < b;
                   });
  order.resize(k);
  return keep(v, std::move(order), Kind::kTopK);
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
