// A kernel source (consensus/CMakeLists.txt): compiled for the baseline and for each level of
// FASTK_KERNELS; mix_dispatch.cc picks the copy. The sums run in kLanes float lanes, each in
// index order, with one rounding per operation (-ffp-contract=off), and the lanes are added
// in double in a fixed order at the end: a wider vector unit runs more lanes at once but
// changes no lane's sum, so every copy gives the same bits. Why 32 lanes: GCC 12 vectorises
// them into whole registers at every level (8 of SSE2, 4 of AVX2, 2 of AVX-512); with 4 to 16
// float lanes, or 8 double ones, it shuffled and ran at the scalar loop's speed or below.
// Measured, 101,770 values (the quickstart's MLP), best of 50: 32 float lanes 12-14 us at
// every level; scalar double 72 us; 4 double lanes 24-51 us. Over that length a lane sums
// about 3,200 terms, far inside float's range even for a model scaled far off.
#include "consensus/model_distance.h"

#include "isa/kernels.h"

namespace {
constexpr std::size_t kLanes = 32;
}

extern "C" fastk::consensus::SlopeAndDistance FASTK_KERNEL(slope_and_squared_distance)(
    std::span<const float> g, std::span<const float> own, std::span<const float> model) {
  const std::size_t n = own.size();
  const float* __restrict gp = g.data();
  const float* __restrict op = own.data();
  const float* __restrict mp = model.data();
  float slope[kLanes] = {}, squared[kLanes] = {};
  std::size_t p = 0;
  for (; p + kLanes <= n; p += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      const float d = mp[p + l] - op[p + l];
      slope[l] += gp[p + l] * d;
      squared[l] += d * d;
    }
  }
  for (std::size_t l = 0; p < n; ++p, ++l) {
    const float d = mp[p] - op[p];
    slope[l] += gp[p] * d;
    squared[l] += d * d;
  }
  fastk::consensus::SlopeAndDistance out;
  for (std::size_t l = 0; l < kLanes; ++l) {
    out.slope += static_cast<double>(slope[l]);
    out.squared += static_cast<double>(squared[l]);
  }
  return out;
}
