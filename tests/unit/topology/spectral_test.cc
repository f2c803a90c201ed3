#include "topology/spectral.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "topology/families.h"
#include "topology/mixing.h"

namespace fastk::topology {
namespace {

double gap_of(const Graph& g, WeightRule rule = WeightRule::kMetropolisHastings) {
  return spectrum(mixing_matrix(g, rule)).spectral_gap();
}

TEST(Spectral, RingOfEightWithMetropolisWeights) {
  // W = (I + P + P^T) / 3 has eigenvalues 1/3 + 2/3 cos(2 pi k / 8).
  const double expected = 1.0 - (1.0 / 3 + 2.0 / 3 * std::cos(std::numbers::pi / 4));
  EXPECT_NEAR(gap_of(ring(8)), expected, 1e-12);
}

TEST(Spectral, FourByFourTorusHasGapPointFour) { EXPECT_NEAR(gap_of(torus(4, 4)), 0.4, 1e-12); }

TEST(Spectral, CompleteGraphsHaveGapOne) {
  for (int n = 2; n <= 12; ++n) EXPECT_NEAR(gap_of(complete(n)), 1.0, 1e-12) << "n = " << n;
}

TEST(Spectral, EigenvaluesAreSortedByModulusAndLeadWithOne) {
  Spectrum s = spectrum(mixing_matrix(hypercube(3), WeightRule::kMetropolisHastings));
  ASSERT_EQ(s.eigenvalues.size(), 8u);
  EXPECT_TRUE(s.real);
  EXPECT_NEAR(s.eigenvalues[0].real(), 1.0, 1e-12);
  for (std::size_t i = 1; i < s.eigenvalues.size(); ++i) {
    EXPECT_LE(std::abs(s.eigenvalues[i]), std::abs(s.eigenvalues[i - 1]) + 1e-12);
  }
  EXPECT_NEAR(s.lambda, 0.5, 1e-12);  // (1 + 3 - 2) / 4
}

TEST(Spectral, NonSymmetricMatricesStillGiveLambda) {
  Spectrum s = spectrum(mixing_matrix(star(5), WeightRule::kUniform));
  EXPECT_GT(s.lambda, 0.0);
  EXPECT_LT(s.lambda, 1.0);
  EXPECT_NEAR(std::abs(s.eigenvalues[0]), 1.0, 1e-9);
}

TEST(Spectral, GossipRounds) {
  EXPECT_EQ(gossip_rounds(0.0, 1e-3), 1);
  EXPECT_EQ(gossip_rounds(0.5, 0.25), 2);
  EXPECT_EQ(gossip_rounds(0.6, 1e-3),
            static_cast<std::int64_t>(std::ceil(std::log(1e3) / std::log(1 / 0.6))));
  EXPECT_FALSE(gossip_rounds(1.0, 1e-3).has_value());
  EXPECT_THROW(gossip_rounds(0.5, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::topology
