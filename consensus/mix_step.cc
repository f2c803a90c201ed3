// A kernel source (consensus/CMakeLists.txt): compiled for the baseline and for each level of
// FASTK_KERNELS; mix_dispatch.cc picks the copy. Every copy gives the same bits (see pass()).
#include "consensus/mix_step.h"

#include <algorithm>

#include "isa/kernels.h"

namespace fastk::consensus {
namespace {

constexpr std::size_t kTermsPerPass = 4;

// One pass over the n values: acc = (kFirst ? self_weight * own : out), plus w_i * x_i for
// the kTerms terms, minus lr * g when kStep, written to out. Left to right with one
// rounding per operation (this file is compiled with -ffp-contract=off), so the bits do not
// depend on how the terms are split into passes, on vectorisation, or on the machine. Every input
// is streamed once and `out` written once; `out` never aliases an input (the protocol writes into a
// buffer nobody else holds), which __restrict tells the vectoriser.
template <std::size_t kTerms, bool kFirst, bool kStep>
void pass(std::size_t n, float* __restrict out, float self_weight, const float* __restrict own,
          const MixTerm* terms, float lr, const float* __restrict g) {
  static_assert(kTerms <= kTermsPerPass);
  const float* __restrict a = kTerms > 0 ? terms[0].model.data() : nullptr;
  const float* __restrict b = kTerms > 1 ? terms[1].model.data() : nullptr;
  const float* __restrict c = kTerms > 2 ? terms[2].model.data() : nullptr;
  const float* __restrict d = kTerms > 3 ? terms[3].model.data() : nullptr;
  const float wa = kTerms > 0 ? terms[0].weight : 0.0f;
  const float wb = kTerms > 1 ? terms[1].weight : 0.0f;
  const float wc = kTerms > 2 ? terms[2].weight : 0.0f;
  const float wd = kTerms > 3 ? terms[3].weight : 0.0f;
  for (std::size_t p = 0; p < n; ++p) {
    float acc;
    if constexpr (kFirst) {
      acc = self_weight * own[p];
    } else {
      acc = out[p];
    }
    if constexpr (kTerms > 0) acc += wa * a[p];
    if constexpr (kTerms > 1) acc += wb * b[p];
    if constexpr (kTerms > 2) acc += wc * c[p];
    if constexpr (kTerms > 3) acc += wd * d[p];
    if constexpr (kStep) acc -= lr * g[p];
    out[p] = acc;
  }
}

using Pass = void (*)(std::size_t, float*, float, const float*, const MixTerm*, float,
                      const float*);

template <bool kFirst, bool kStep>
Pass pass_for(std::size_t terms) {
  switch (terms) {
    case 0:
      return pass<0, kFirst, kStep>;
    case 1:
      return pass<1, kFirst, kStep>;
    case 2:
      return pass<2, kFirst, kStep>;
    case 3:
      return pass<3, kFirst, kStep>;
    default:
      return pass<4, kFirst, kStep>;
  }
}

}  // namespace

}  // namespace fastk::consensus

extern "C" void FASTK_KERNEL(mix_and_step)(std::span<float> next, float self_weight,
                                           std::span<const float> own,
                                           const std::vector<fastk::consensus::MixTerm>& terms,
                                           float lr, std::span<const float> gradient) {
  using namespace fastk::consensus;
  // Up to four models per pass (a ring or a torus in one pass; more neighbours in a few),
  // the gradient in the last one.
  std::size_t done = 0;
  bool first = true;
  do {
    const std::size_t now = std::min(kTermsPerPass, terms.size() - done);
    const bool step = done + now == terms.size() && !gradient.empty();
    const Pass run = first ? (step ? pass_for<true, true>(now) : pass_for<true, false>(now))
                           : (step ? pass_for<false, true>(now) : pass_for<false, false>(now));
    run(next.size(), next.data(), self_weight, own.data(), terms.data() + done, lr,
        gradient.data());
    done += now;
    first = false;
  } while (done < terms.size());
}
