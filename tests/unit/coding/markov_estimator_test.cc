// Two-state Markov straggler estimator (docs/coding.md §6.2; property 19).
#include "coding/markov_estimator.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace fastk::coding {
namespace {

// Uniform in [0, 1) from the top 53 bits: the same sequence with every standard library.
double uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

TEST(CodingMarkovEstimatorTest, BeforeDataTheEstimatesAreThePriors) {
  const MarkovStragglerEstimator e(0.1, 0.5, 1.0);
  EXPECT_FALSE(e.observed());
  EXPECT_DOUBLE_EQ(e.good_to_bad(), 0.1);
  EXPECT_DOUBLE_EQ(e.bad_to_good(), 0.5);
  EXPECT_DOUBLE_EQ(e.predict(), 0.1 / 0.6);  // stationary straggle probability
}

TEST(CodingMarkovEstimatorTest, PseudoCountsAndLastStatePrediction) {
  MarkovStragglerEstimator e(0.1, 0.5, 1.0);
  e.observe(false);
  EXPECT_TRUE(e.observed());
  EXPECT_DOUBLE_EQ(e.predict(), 0.1);  // no transition counted yet; last state good
  e.observe(true);                     // one good -> bad transition
  EXPECT_DOUBLE_EQ(e.good_to_bad(), (1 + 0.1) / (1 + 1.0));
  EXPECT_DOUBLE_EQ(e.predict(), 1 - 0.5);  // last state bad: stays bad w.p. 1 - p_SN
  e.observe(true);                         // bad -> bad
  EXPECT_DOUBLE_EQ(e.bad_to_good(), (0 + 0.5) / (1 + 1.0));
  EXPECT_DOUBLE_EQ(e.predict(), 0.75);
}

TEST(CodingMarkovEstimatorTest, ZeroPriorWeightIsThePlainMaximumLikelihood) {
  MarkovStragglerEstimator e(0.2, 0.2, 0.0);
  for (bool s : {false, false, true, false, false, false, true}) e.observe(s);
  // From good: 5 transitions, 2 to bad. From bad: 1 transition, to good.
  EXPECT_DOUBLE_EQ(e.good_to_bad(), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(e.bad_to_good(), 1.0);
}

TEST(CodingMarkovEstimatorTest, RecoversTransitionProbabilitiesWithinTenPercent) {
  struct Chain {
    double p_ns, p_sn;
  };
  std::mt19937_64 rng(42);
  for (const Chain& chain : {Chain{0.05, 0.3}, Chain{0.1, 0.3}, Chain{0.2, 0.5}}) {
    MarkovStragglerEstimator e;
    bool straggling = false;
    for (int t = 0; t < 10000; ++t) {
      e.observe(straggling);
      const double u = uniform(rng);
      straggling = straggling ? u >= chain.p_sn : u < chain.p_ns;
    }
    EXPECT_NEAR(e.good_to_bad(), chain.p_ns, 0.1 * chain.p_ns);
    EXPECT_NEAR(e.bad_to_good(), chain.p_sn, 0.1 * chain.p_sn);
  }
}

TEST(CodingMarkovEstimatorTest, BadPriorsAreRejected) {
  EXPECT_THROW(MarkovStragglerEstimator(-0.1, 0.5), std::invalid_argument);
  EXPECT_THROW(MarkovStragglerEstimator(0.1, 1.5), std::invalid_argument);
  EXPECT_THROW(MarkovStragglerEstimator(0.0, 0.0), std::invalid_argument);
  EXPECT_THROW(MarkovStragglerEstimator(0.1, 0.5, -1.0), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::coding
