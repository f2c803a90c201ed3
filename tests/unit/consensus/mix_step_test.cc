// The update's arithmetic: next = self_weight * own + sum_j w_j * x_j - lr * g, left to right
// with one float rounding per operation, whatever the number of neighbours (one pass takes
// up to four), the vector length (vectorised body and scalar tail) or the compiler's habit
// of fusing multiply-adds.
#include "consensus/mix_step.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "isa/kernels.h"

FASTK_DECLARE_KERNEL(void, mix_and_step,
                     (std::span<float> next, float self_weight, std::span<const float> own,
                      const std::vector<fastk::consensus::MixTerm>& terms, float lr,
                      std::span<const float> gradient))

namespace fastk::consensus {
namespace {

// Each product and sum goes through a volatile float, so it is rounded on its own: no
// fused multiply-add can creep into the reference.
float reference(float self_weight, float own, const std::vector<std::pair<float, float>>& terms,
                float lr, const float* g) {
  volatile float acc = self_weight * own;
  for (const auto& [w, x] : terms) {
    volatile float product = w * x;
    acc = acc + product;
  }
  if (g) {
    volatile float product = lr * *g;
    acc = acc - product;
  }
  return acc;
}

TEST(MixAndStep, IsLeftToRightWithOneRoundingPerOperationForAnyNeighbourCountAndLength) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (std::size_t count = 0; count <= 9; ++count) {
    for (bool step : {false, true}) {
      for (std::size_t n : {1u, 5u, 1000u, 4099u}) {
        std::vector<std::vector<float>> models(count, std::vector<float>(n));
        std::vector<float> own(n), gradient(n), next(n, -1.0f);
        for (auto& m : models)
          for (float& v : m) v = normal(rng);
        for (float& v : own) v = normal(rng);
        for (float& v : gradient) v = normal(rng);
        std::vector<MixTerm> terms;
        for (std::size_t j = 0; j < count; ++j) terms.push_back({0.05f + 0.07f * j, models[j]});
        const float self_weight = 0.3f, lr = 0.05f;
        mix_and_step(next, self_weight, own, terms, lr,
                     step ? std::span<const float>(gradient) : std::span<const float>());
        for (std::size_t p = 0; p < n; ++p) {
          std::vector<std::pair<float, float>> at;
          for (std::size_t j = 0; j < count; ++j) at.emplace_back(terms[j].weight, models[j][p]);
          const float expected =
              reference(self_weight, own[p], at, lr, step ? &gradient[p] : nullptr);
          ASSERT_EQ(std::memcmp(&next[p], &expected, sizeof(float)), 0)
              << count << " neighbours, step " << step << ", length " << n << ", element " << p
              << ": " << next[p] << " != " << expected;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fastk::consensus

namespace fastk::consensus {
namespace {

// Every kernel this binary has (isa/kernels.h) that this CPU runs gives the baseline's bits:
// peers on hosts with different instruction sets mix alike (docs/build.md §1).
TEST(MixStepKernels, EveryLevelThisCpuRunsGivesTheBaselinesBits) {
  using Kernel = decltype(&FASTK_KERNEL_NAME(mix_and_step, base));
  std::vector<std::pair<isa::Level, Kernel>> kernels = {
      {isa::Level::kX86_64, &FASTK_KERNEL_NAME(mix_and_step, base)}};
  FASTK_IF_KERNELS_x86_64_v3(
      kernels.emplace_back(isa::Level::kX86_64_V3, &FASTK_KERNEL_NAME(mix_and_step, x86_64_v3));)
      FASTK_IF_KERNELS_x86_64_v4(kernels.emplace_back(isa::Level::kX86_64_V4,
                                                      &FASTK_KERNEL_NAME(mix_and_step, x86_64_v4));)
          std::mt19937 rng(7);
  std::normal_distribution<float> value(0.0f, 1.0f);
  const std::size_t n = 1037;  // a vectorised body and a scalar tail at every width
  std::vector<std::vector<float>> models(6, std::vector<float>(n));
  for (auto& m : models)
    for (auto& v : m) v = value(rng);
  std::vector<MixTerm> terms;
  for (int j = 1; j < 6; ++j) terms.push_back({0.1f * static_cast<float>(j), models[j]});
  const std::vector<float>& own = models[0];
  std::vector<float> gradient(n);
  for (auto& v : gradient) v = value(rng);
  std::vector<float> base(n);
  kernels[0].second(base, 0.3f, own, terms, 0.05f, gradient);
  int compared = 0;
  for (const auto& [level, kernel] : kernels) {
    if (!isa::cpu_supports(level)) continue;
    std::vector<float> next(n);
    kernel(next, 0.3f, own, terms, 0.05f, gradient);
    EXPECT_EQ(std::memcmp(next.data(), base.data(), n * sizeof(float)), 0)
        << isa::level_name(level);
    ++compared;
  }
  EXPECT_GE(compared, 1);
}

}  // namespace
}  // namespace fastk::consensus
