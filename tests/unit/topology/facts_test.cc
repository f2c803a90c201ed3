#include "topology/facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace fastk::topology {
namespace {

// One-peer exponential, 16 peers: four rounds with hops 1, 2, 4, 8. Each round's W is a
// shift mixed half-half with self: doubly stochastic though not symmetric, so no warning.
// Alone, a round contracts disagreement by cos(pi / 16) (hop 1) or not at all (hops 2, 4, 8
// leave a pattern of period 16 / hop untouched); the period's product averages exactly.
TEST(TopologyFacts, ReportsEachRoundAndThePeriodOfATimeVaryingSchedule) {
  TopologySpec spec;
  spec.kind = TopologyKind::kOnePeerExponential;
  spec.peers = 16;
  const TopologyFacts f = analyze(build_topology(spec));
  EXPECT_EQ(f.period, 4);
  ASSERT_EQ(f.round_lambdas.size(), 4u);
  EXPECT_NEAR(f.round_lambdas[0], std::cos(std::numbers::pi / 16), 1e-9);
  for (int k = 1; k < 4; ++k) EXPECT_NEAR(f.round_lambdas[k], 1.0, 1e-9) << "round " << k;
  EXPECT_NEAR(f.spectrum.lambda, 0.0, 1e-9);
  EXPECT_TRUE(f.mixing.usable());
  EXPECT_TRUE(f.mixing.row_stochastic);
  EXPECT_TRUE(f.mixing.column_stochastic);
  EXPECT_FALSE(f.mixing.symmetric);
  EXPECT_THAT(f.mixing.warnings, testing::IsEmpty());
  EXPECT_EQ(f.rounds_to_eps, 4);
}

// A static graph has one W: no per-round list, and the rate is W's own.
TEST(TopologyFacts, AStaticGraphHasNoRounds) {
  TopologySpec spec;
  spec.kind = TopologyKind::kRing;
  spec.peers = 8;
  const TopologyFacts f = analyze(build_topology(spec));
  EXPECT_EQ(f.period, 1);
  EXPECT_TRUE(f.round_lambdas.empty());
  EXPECT_DOUBLE_EQ(f.lambda_per_round, f.spectrum.lambda);
  EXPECT_TRUE(f.mixing.symmetric);
  EXPECT_THAT(f.mixing.warnings, testing::IsEmpty());
}

}  // namespace
}  // namespace fastk::topology
