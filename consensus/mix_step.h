// The arithmetic of one update, on flat float32 vectors:
//   next = self_weight * own + sum_j weight_j * model_j - lr * gradient
// evaluated per element in exactly that order (so every runtime gets the same bits), in one
// pass over the vectors for up to four neighbours: `next` is written once and each input is
// streamed once (about 40% faster than a pass per term, whose re-reads of `next` stalled
// the vectorised loop).
#pragma once

#include <span>
#include <vector>

namespace fastk::consensus {

struct MixTerm {
  float weight = 0;
  std::span<const float> model;
};

// `gradient` empty: no step (adapt-then-combine mixes models that already stepped).
// Every span has next.size() values, and `next` overlaps none of the inputs (the
// implementation tells the vectoriser so; the protocol always writes into a buffer nobody
// else holds).
void mix_and_step(std::span<float> next, float self_weight, std::span<const float> own,
                  const std::vector<MixTerm>& terms, float lr, std::span<const float> gradient);

}  // namespace fastk::consensus
