#include "consensus/mix_step.h"

#include <algorithm>

namespace fastk::consensus {

void mix_and_step(std::span<float> next, float self_weight, std::span<const float> own,
                  const std::vector<MixTerm>& terms, float lr, std::span<const float> gradient) {
  constexpr std::size_t kChunk = 2048;  // 8 KiB of each vector
  const std::size_t n = next.size();
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    const std::size_t end = std::min(n, begin + kChunk);
    float* out = next.data();
    for (std::size_t p = begin; p < end; ++p) out[p] = self_weight * own[p];
    for (const MixTerm& term : terms) {
      const float* x = term.model.data();
      for (std::size_t p = begin; p < end; ++p) out[p] += term.weight * x[p];
    }
    if (!gradient.empty()) {
      const float* g = gradient.data();
      for (std::size_t p = begin; p < end; ++p) out[p] -= lr * g[p];
    }
  }
}

}  // namespace fastk::consensus
