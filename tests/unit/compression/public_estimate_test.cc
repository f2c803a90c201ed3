// CHOCO's public estimate (compression/public_estimate.h): the owner's and a neighbour's copies
// stay bit for bit alike, and error feedback keeps the estimate's error bounded on a stream.
#include "compression/public_estimate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fastk::compression {
namespace {

std::vector<float> model_at(int t, std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(std::sin(0.01 * t + 0.3 * i) + 0.001 * t);
  }
  return x;
}

double distance(std::span<const float> a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < b.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

// A model that drifts by a little every step, compressed to 5% of its values (top_k) or to
// stochastic bytes (int8): the estimate's error settles instead of growing with the stream,
// because what one step drops the next one sends.
TEST(PublicEstimate, ErrorFeedbackKeepsTheErrorBoundedOnADriftingStream) {
  constexpr std::size_t kN = 200;
  for (Kind kind : {Kind::kTopK, Kind::kInt8, Kind::kRandomK, Kind::kQsgd}) {
    CompressorSpec spec;
    spec.kind = kind;
    spec.fraction = 0.05;
    spec.levels = 4;
    PublicEstimate owner(model_at(0, kN)), neighbour(model_at(0, kN));
    double worst_late = 0, first_quarter = 0;
    for (int t = 1; t <= 2000; ++t) {
      const auto x = model_at(t, kN);
      neighbour.apply(owner.advance(spec, x, static_cast<std::uint64_t>(t)));
      const double error = distance(owner.value(), x);
      if (t <= 500) first_quarter = std::max(first_quarter, error);
      if (t > 1000) worst_late = std::max(worst_late, error);
    }
    EXPECT_LE(worst_late, 1.5 * first_quarter + 1e-6) << to_string(kind) << ": the error grew";
    // Without the feedback (sending Q(x) itself) the error would be most of the model's norm
    // under the sparsifiers; with it, a fraction.
    const auto x = model_at(2000, kN);
    std::vector<float> zero(kN, 0.0f);
    const double norm = distance(zero, x);
    std::vector<float> without(kN, 0.0f);
    add_decompressed(compress(spec, x, 1), 1.0f, without);
    const double no_feedback = distance(without, x);
    EXPECT_LT(worst_late, 0.15 * norm) << to_string(kind) << " (norm " << norm << ")";
    if (kind == Kind::kTopK || kind == Kind::kRandomK) {
      EXPECT_LT(worst_late, 0.2 * no_feedback)
          << to_string(kind) << " without feedback " << no_feedback;
    }
    const auto a = owner.value(), b = neighbour.value();
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << to_string(kind);
  }
}

// QSGD with few levels errs by more than the vector: sent as it is, the estimate would
// overshoot. Divided by tau (CHOCO's rescaled QSGD) every step brings the estimate closer on
// average, on a model that stops moving.
TEST(PublicEstimate, QsgdIsRescaledIntoAContraction) {
  constexpr std::size_t kN = 400;
  CompressorSpec spec;
  spec.kind = Kind::kQsgd;
  spec.levels = 2;  // tau = 1 + min(400 / 4, 20 / 2) = 11
  const auto x = model_at(7, kN);
  double raw_error = 0, scaled_before = 0, scaled_after = 0;
  PublicEstimate estimate(std::vector<float>(kN, 0.0f));
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::vector<float> raw(kN, 0.0f);
    const Compressed q = compress(spec, x, seed);
    add_decompressed(q, 1.0f, raw);
    raw_error += distance(raw, x) / 200;
    scaled_before += distance(estimate.value(), x) / 200;
    const Compressed sent = estimate.advance(spec, x, seed);
    // The first difference is x itself (the estimate starts at 0): its norm, divided by tau.
    if (seed == 1) {
      EXPECT_FLOAT_EQ(sent.scales[0], static_cast<float>(q.scales[0] / 11.0));
    }
    scaled_after += distance(estimate.value(), x) / 200;
  }
  std::vector<float> zero(kN, 0.0f);
  EXPECT_GT(raw_error, distance(zero, x)) << "plain QSGD would be a contraction: test moot";
  EXPECT_LT(scaled_after, scaled_before);
  EXPECT_LT(distance(estimate.value(), x), 0.1 * distance(zero, x));
}

// A model that stops moving is reached exactly by top_k: each step sends the largest of what
// is left, so after n/k steps nothing is.
TEST(PublicEstimate, AFixedModelIsReachedExactlyByTopK) {
  CompressorSpec spec;
  spec.kind = Kind::kTopK;
  spec.fraction = 0.1;
  PublicEstimate estimate(std::vector<float>(50, 0.0f));
  const auto x = model_at(3, 50);
  for (int t = 0; t < 10; ++t) estimate.advance(spec, x, 1);
  EXPECT_EQ(distance(estimate.value(), x), 0.0);
}

TEST(PublicEstimate, AForgedOrMisSizedDifferenceIsRefused) {
  PublicEstimate estimate(std::vector<float>(10, 0.0f));
  Compressed wrong_length;
  wrong_length.kind = Kind::kTopK;
  wrong_length.length = 11;
  EXPECT_THROW(estimate.apply(wrong_length), std::invalid_argument);
  Compressed forged;
  forged.kind = Kind::kTopK;
  forged.length = 10;
  forged.indices = {3, 2};
  forged.values = {1.0f, 1.0f};
  EXPECT_THROW(estimate.apply(forged), std::invalid_argument);
  for (float v : estimate.value()) EXPECT_EQ(v, 0.0f) << "nothing applied";
}

}  // namespace
}  // namespace fastk::compression
