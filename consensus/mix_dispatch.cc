// mix_and_step and slope_and_squared_distance: mix_step.cc's and model_distance.cc's copies
// for the kernels this process runs (isa/level.h).
#include "consensus/mix_step.h"
#include "consensus/model_distance.h"
#include "isa/kernels.h"

FASTK_DECLARE_KERNEL(void, mix_and_step,
                     (std::span<float> next, float self_weight, std::span<const float> own,
                      const std::vector<fastk::consensus::MixTerm>& terms, float lr,
                      std::span<const float> gradient))
FASTK_DECLARE_KERNEL(fastk::consensus::SlopeAndDistance, slope_and_squared_distance,
                     (std::span<const float> g, std::span<const float> own,
                      std::span<const float> model))

namespace fastk::consensus {

void mix_and_step(std::span<float> next, float self_weight, std::span<const float> own,
                  const std::vector<MixTerm>& terms, float lr, std::span<const float> gradient) {
  static const auto mix = FASTK_PICK_KERNEL(mix_and_step);
  mix(next, self_weight, own, terms, lr, gradient);
}

SlopeAndDistance slope_and_squared_distance(std::span<const float> g, std::span<const float> own,
                                            std::span<const float> model) {
  static const auto kernel = FASTK_PICK_KERNEL(slope_and_squared_distance);
  return kernel(g, own, model);
}

}  // namespace fastk::consensus
