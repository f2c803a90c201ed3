// Bernoulli gradient code (docs/coding.md §5.2; properties 13 and 17).
#include "coding/bernoulli_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

std::vector<int> random_subset(int n, int size, std::mt19937_64& rng) {
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int i = 0; i < size; ++i) std::swap(all[i], all[i + int(rng() % (n - i))]);
  return {all.begin(), all.begin() + size};
}

TEST(CodingBernoulliTest, OneStepWeightsAreUnbiasedOverTheRandomAssignment) {
  // a_i = k / (|S| d): E[alpha_j] = |S| (d/k) k / (|S| d) = 1 for every arrival set.
  std::mt19937_64 rng(13);
  testing::MeanEstimate alpha_0, mean_alpha;
  for (std::uint64_t seed = 0; seed < 4000; ++seed) {
    const BernoulliCode code(20, 20, 3.0, seed);
    const Decoding d = code.decode_one_step(random_subset(20, 15, rng));
    alpha_0.add(d.alpha[0]);
    mean_alpha.add(std::accumulate(d.alpha.begin(), d.alpha.end(), 0.0) / 20.0);
  }
  EXPECT_NEAR(alpha_0.mean(), 1.0, 3 * alpha_0.standard_error());
  EXPECT_NEAR(mean_alpha.mean(), 1.0, 3 * mean_alpha.standard_error());
}

TEST(CodingBernoulliTest, OptimalDecoderIsNeverWorseThanOneStep) {
  std::mt19937_64 rng(17);
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const BernoulliCode code(12, 12, 2.0 + double(seed % 4), seed);
    const std::vector<int> arrived = random_subset(12, 4 + int(seed % 8), rng);
    EXPECT_LE(code.decode(arrived).error, code.decode_one_step(arrived).error + 1e-9)
        << code.name();
  }
}

TEST(CodingBernoulliTest, ExpectedLoadIsD) {
  double held = 0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const BernoulliCode code(40, 40, 4.0, seed);
    held += (code.encoding().array() != 0.0).count() / 40.0 / 50.0;
  }
  EXPECT_NEAR(held, 4.0, 0.2);
}

TEST(CodingBernoulliTest, BadShapesAreRejected) {
  EXPECT_THROW(BernoulliCode(4, 4, 0.0, 1), std::invalid_argument);
  EXPECT_THROW(BernoulliCode(4, 4, 5.0, 1), std::invalid_argument);
  EXPECT_THROW(BernoulliCode(0, 4, 1.0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::coding
