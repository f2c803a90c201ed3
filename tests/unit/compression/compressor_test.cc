// Each compressor's contract (compression/compressor.h): exact round trips where it is
// lossless, unbiasedness where it claims it, its error bound, and the checks a received
// Compressed must pass (compression/compressed.h).
#include "compression/compressor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "compression/half.h"

namespace fastk::compression {
namespace {

std::vector<float> decompressed(const Compressed& c) {
  std::vector<float> out(c.length, 0.0f);
  add_decompressed(c, 1.0f, out);
  return out;
}

// A vector with values of several magnitudes and signs.
std::vector<float> sample(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(std::sin(0.7 * i) * std::pow(10.0, static_cast<double>(i % 5) - 2));
  }
  return v;
}

double squared_norm(const std::vector<float>& v) {
  return std::inner_product(v.begin(), v.end(), v.begin(), 0.0);
}

CompressorSpec spec_of(Kind kind) {
  CompressorSpec spec;
  spec.kind = kind;
  spec.chunk = 16;
  spec.levels = 8;
  spec.fraction = 0.1;
  return spec;
}

TEST(Half, RoundTripsEveryRepresentableValueAndRoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    if ((h & 0x7c00u) == 0x7c00u) continue;  // infinities and NaNs
    const float f = from_half(static_cast<std::uint16_t>(h));
    EXPECT_EQ(to_half(f), h) << std::hex << h;
  }
  EXPECT_EQ(to_half(1.0f + 0x1p-11f), to_half(1.0f)) << "a tie goes to the even mantissa";
  EXPECT_EQ(to_half(1.0f + 3 * 0x1p-11f), to_half(1.0f + 0x1p-9f)) << "... here upwards";
  EXPECT_EQ(from_half(to_half(0x1p-25f)), 0.0f);
  EXPECT_EQ(from_half(to_half(0x1p-24f)), 0x1p-24f) << "the smallest subnormal";
}

TEST(Fp16, RelativeErrorIsAtMostHalfAnUlpAndLargeValuesAreClamped) {
  const std::vector<float> v = sample(1000);
  const Compressed c = compress(spec_of(Kind::kFloat16), v, 1);
  ASSERT_FALSE(invalid(c).has_value());
  const auto back = decompressed(c);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::fabs(v[i]) < 0x1p-14f) continue;  // subnormal halves have absolute steps
    EXPECT_LE(std::fabs(back[i] - v[i]), 0x1p-11f * std::fabs(v[i])) << i;
  }
  const std::vector<float> big = {1e6f, -1e6f};
  EXPECT_EQ(decompressed(compress(spec_of(Kind::kFloat16), big, 1)),
            (std::vector<float>{65504.0f, -65504.0f}));
  EXPECT_EQ(c.payload_bytes(), 8u + 2 * 1000);
}

// The mean over many seeds converges to v (standard error ~ bound / sqrt(seeds)), and no single
// compression errs by more than its step.
void expect_unbiased_with_step_bound(Kind kind) {
  const std::vector<float> v = sample(64);
  const CompressorSpec spec = spec_of(kind);
  constexpr int kSeeds = 4000;
  std::vector<double> mean(v.size(), 0.0);
  double largest_step = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const Compressed c = compress(spec, v, static_cast<std::uint64_t>(seed));
    ASSERT_FALSE(invalid(c).has_value()) << *invalid(c);
    const auto back = decompressed(c);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double step =
          kind == Kind::kInt8 ? c.scales[i / spec.chunk] : c.scales[0] / spec.levels;
      largest_step = std::max(largest_step, step);
      EXPECT_LE(std::fabs(back[i] - v[i]), step * (1 + 1e-5)) << to_string(kind) << " " << i;
      mean[i] += back[i] / kSeeds;
    }
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(mean[i], v[i], 4 * largest_step / std::sqrt(kSeeds)) << to_string(kind) << " " << i;
  }
}

TEST(Int8, IsUnbiasedAndErrsByLessThanItsChunksScale) {
  expect_unbiased_with_step_bound(Kind::kInt8);
}

TEST(Qsgd, IsUnbiasedAndErrsByLessThanNormOverLevels) {
  expect_unbiased_with_step_bound(Kind::kQsgd);
}

TEST(Int8, ASeedGivesTheSameBitsAndAnotherSeedOtherBits) {
  const std::vector<float> v = sample(200);
  const CompressorSpec spec = spec_of(Kind::kInt8);
  EXPECT_EQ(compress(spec, v, 7).codes, compress(spec, v, 7).codes);
  EXPECT_NE(compress(spec, v, 7).codes, compress(spec, v, 8).codes);
  EXPECT_EQ(compress(spec, v, 7).payload_bytes(), 8u + 4 * 13 + 200) << "13 chunks of 16";
}

TEST(TopK, KeepsTheLargestMagnitudesAndContracts) {
  const std::vector<float> v = {0.1f, -5.0f, 2.0f, 0.0f, 3.0f, -0.2f, 2.0f, 1.0f, 0.5f, -4.0f};
  CompressorSpec spec = spec_of(Kind::kTopK);
  spec.fraction = 0.3;  // k = 3
  const Compressed c = compress(spec, v, 1);
  EXPECT_EQ(c.indices, (std::vector<std::uint32_t>{1, 4, 9}));
  EXPECT_EQ(c.values, (std::vector<float>{-5.0f, 3.0f, -4.0f}));
  spec.fraction = 0.4;  // k = 4: of the tied 2.0s the lower index
  EXPECT_EQ(compress(spec, v, 1).indices, (std::vector<std::uint32_t>{1, 2, 4, 9}));
  const std::vector<float> w = sample(500);
  spec.fraction = 0.05;
  const auto back = decompressed(compress(spec, w, 1));
  std::vector<float> error(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) error[i] = w[i] - back[i];
  EXPECT_LE(squared_norm(error), (1 - 25.0 / 500) * squared_norm(w));
}

TEST(RandomK, KeepsKDistinctIndicesAndContractsInExpectation) {
  const std::vector<float> v = sample(400);
  CompressorSpec spec = spec_of(Kind::kRandomK);
  spec.fraction = 0.1;  // k = 40
  double error_sum = 0;
  constexpr int kSeeds = 500;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const Compressed c = compress(spec, v, static_cast<std::uint64_t>(seed));
    ASSERT_EQ(c.indices.size(), 40u);
    ASSERT_FALSE(invalid(c).has_value()) << *invalid(c);
    const auto back = decompressed(c);
    std::vector<float> error(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) error[i] = v[i] - back[i];
    error_sum += squared_norm(error);
  }
  EXPECT_NEAR(error_sum / kSeeds / squared_norm(v), 0.9, 0.02);
  EXPECT_NE(compress(spec, v, 1).indices, compress(spec, v, 2).indices);
}

TEST(Compressed, ForgedOnesAreNamedInvalid) {
  const std::vector<float> v = sample(40);
  auto broken = [&](Kind kind, auto&& change) {
    Compressed c = compress(spec_of(kind), v, 3);
    EXPECT_FALSE(invalid(c).has_value()) << to_string(kind);
    change(c);
    const auto why = invalid(c);
    return why ? *why : std::string("valid");
  };
  EXPECT_EQ(broken(Kind::kFloat16, [](Compressed& c) { c.halves.pop_back(); }),
            "not one half per value");
  EXPECT_EQ(broken(Kind::kFloat16, [](Compressed& c) { c.halves[0] = 0x7c00; }),
            "an infinite or NaN half");
  EXPECT_EQ(broken(Kind::kInt8, [](Compressed& c) { c.scales.pop_back(); }),
            "not one scale per chunk");
  EXPECT_EQ(broken(Kind::kInt8, [](Compressed& c) { c.scales[0] = NAN; }),
            "a negative or non-finite scale");
  EXPECT_EQ(broken(Kind::kInt8, [](Compressed& c) { c.codes[1] = -128; }),
            "a code of -128 (codes are -127..127)");
  EXPECT_EQ(broken(Kind::kInt8, [](Compressed& c) { c.parameter = 0; }), "a chunk of 0 values");
  EXPECT_EQ(broken(Kind::kQsgd, [](Compressed& c) { c.codes[0] = 9; }), "a code beyond the levels");
  EXPECT_EQ(broken(Kind::kQsgd, [](Compressed& c) { c.parameter = 200; }), "levels outside 1..127");
  EXPECT_EQ(broken(Kind::kTopK, [](Compressed& c) { c.indices[1] = c.indices[0]; }),
            "indices not strictly increasing");
  EXPECT_EQ(broken(Kind::kTopK, [](Compressed& c) { c.indices.back() = 40; }),
            "an index beyond the vector");
  EXPECT_EQ(broken(Kind::kRandomK, [](Compressed& c) { c.values.pop_back(); }),
            "indices and values differ in number");
  EXPECT_EQ(broken(Kind::kRandomK, [](Compressed& c) { c.codes.push_back(1); }),
            "fields of another kind");
}

TEST(CompressorSpec, ParametersOutOfRangeAreNamed) {
  CompressorSpec spec;
  spec.kind = Kind::kQsgd;
  spec.levels = 128;
  EXPECT_THROW(check(spec), std::invalid_argument);
  spec.kind = Kind::kTopK;
  spec.fraction = 0;
  EXPECT_THROW(check(spec), std::invalid_argument);
  EXPECT_EQ(parse_kind("top_k"), Kind::kTopK);
  EXPECT_THROW(parse_kind("zip"), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::compression
