// mix_and_step: mix_step.cc's copy for the kernels this process runs (isa/level.h).
#include "consensus/mix_step.h"
#include "isa/kernels.h"

FASTK_DECLARE_KERNEL(void, mix_and_step,
                     (std::span<float> next, float self_weight, std::span<const float> own,
                      const std::vector<fastk::consensus::MixTerm>& terms, float lr,
                      std::span<const float> gradient))

namespace fastk::consensus {

void mix_and_step(std::span<float> next, float self_weight, std::span<const float> own,
                  const std::vector<MixTerm>& terms, float lr, std::span<const float> gradient) {
  static const auto mix = FASTK_PICK_KERNEL(mix_and_step);
  mix(next, self_weight, own, terms, lr, gradient);
}

}  // namespace fastk::consensus
