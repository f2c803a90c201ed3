// The aggregation rules of plain gossip ([consensus] aggregation, consensus/variants/
// variants.h): each is a mixing variant, chosen by name. One peer of a ring of four (peer 0,
// neighbours 1 and 3) takes one update from given models, so what each rule mixes is seen
// value by value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using ::testing::HasSubstr;

// Peer 0's x(1) under `aggregation`, policy full, combine-then-adapt, after its neighbours 1
// and 3 sent `one` and `three` and its own gradient came back as `gradient`, with lr 0.5.
// `faulty`: consensus.faulty_neighbours.
std::vector<float> one_update(const std::string& aggregation, const std::vector<float>& own,
                              const std::vector<float>& one, const std::vector<float>& three,
                              const std::vector<float>& gradient, int faulty = 1) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 2;
  config.optimizer.lr = 0.5;
  config.aggregation = aggregation;
  config.faulty_neighbours = faulty;
  PeerProtocol peer(0, topo.schedule, config, make_params(own));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, ModelArrived{1, 0, make_params(one)}, out);
  peer.handle(0.2, ModelArrived{3, 0, make_params(three)}, out);
  peer.handle(0.3, GradientDone{gradient, {}}, out);
  EXPECT_EQ(peer.iteration(), 1);
  const auto x = peer.model()->values();
  return {x.begin(), x.end()};
}

TEST(Aggregation, MeanIsTheRingsWeightedAverageThenTheStep) {
  // Ring weights: a third each. x(1) = (own + one + three) / 3 - 0.5 g.
  const auto x = one_update("mean", {3, 0}, {6, 3}, {0, 6}, {2, -2});
  ASSERT_EQ(x.size(), 2u);
  EXPECT_NEAR(x[0], 3.0f - 1.0f, 1e-6);
  EXPECT_NEAR(x[1], 3.0f + 1.0f, 1e-6);
}

TEST(Aggregation, MedianTakesEachCoordinatesMiddleValueThenTheStep) {
  // Per coordinate: median(3, 6, 0) = 3, median(0, 3, 6) = 3; then - 0.5 g.
  const auto x = one_update("median", {3, 0}, {6, 3}, {0, 6}, {2, -2});
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0], 3.0f - 1.0f);
  EXPECT_EQ(x[1], 3.0f + 1.0f);
}

TEST(Aggregation, AnOutlyingNeighbourMovesTheMedianOnlyWithinTheOthers) {
  // Neighbour 3 sends a model scaled far off: the mean follows it, the median stays between
  // the own model and neighbour 1's.
  const std::vector<float> own = {1, -1}, one = {2, -2}, far = {1e30f, -1e30f};
  const auto mean = one_update("mean", own, one, far, {0, 0});
  const auto median = one_update("median", own, one, far, {0, 0});
  EXPECT_GT(mean[0], 1e29f);
  EXPECT_EQ(median[0], 2.0f);
  EXPECT_EQ(median[1], -2.0f);
}

// Peer 0's x(1) as in one_update, one value each, with neighbour 3 gone (its BYE) before
// neighbour 1's model came: the own model and one neighbour's are mixed.
// `radius`: consensus.clipping_radius.
float update_with_three_gone(const std::string& aggregation, float own, float one, float gradient,
                             double radius = 0) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 2;
  config.optimizer.lr = 0.5;
  config.aggregation = aggregation;
  config.clipping_radius = radius;
  PeerProtocol peer(0, topo.schedule, config, make_params({own}));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, NeighbourLeft{3}, out);
  peer.handle(0.2, ModelArrived{1, 0, make_params({one})}, out);
  peer.handle(0.3, GradientDone{{gradient}, {}}, out);
  EXPECT_EQ(peer.iteration(), 1);
  return peer.model()->values()[0];
}

TEST(Aggregation, AnEvenCountTakesTheMeanOfTheTwoMiddleValues) {
  // Policy full on a ring of four: the own model and two neighbours make three values; with
  // one neighbour gone, two: their midpoint.
  EXPECT_EQ(update_with_three_gone("median", 1.0f, 4.0f, 0.0f), 2.5f);
}

TEST(Aggregation, TrimmedMeanDropsTheExtremesOfEachCoordinateThenSteps) {
  // Three values per coordinate, b = 1: one trimmed from each end leaves the middle one.
  const auto x = one_update("trimmed_mean", {3, 0}, {6, 3}, {0, 6}, {2, -2});
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0], 3.0f - 1.0f);
  EXPECT_EQ(x[1], 3.0f + 1.0f);
  // b = 0 trims nothing: the plain mean of the three, then the step.
  const auto untrimmed = one_update("trimmed_mean", {3, 0}, {6, 3}, {0, 9}, {2, -2}, 0);
  EXPECT_EQ(untrimmed[0], 3.0f - 1.0f);
  EXPECT_EQ(untrimmed[1], 4.0f + 1.0f);
  // b larger than the values allow trims (3 - 1) / 2 = 1 from each end: never everything.
  const auto capped = one_update("trimmed_mean", {3, 0}, {6, 3}, {0, 6}, {0, 0}, 5);
  EXPECT_EQ(capped[0], 3.0f);
}

TEST(Aggregation, TrimmedMeanKeepsMoreThanTheMedianFromFiveValues) {
  // Peer 0 of a complete graph of five: its own value and four neighbours'. b = 1 trims one
  // from each end and averages the middle three; the median keeps the middle one.
  const auto topo = testing::make_topology(topology::TopologyKind::kComplete, 5);
  const auto update = [&](const std::string& aggregation) {
    ProtocolConfig config;
    config.iterations = 2;
    config.aggregation = aggregation;
    PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
    Actions out;
    peer.start(0, out);
    const float values[] = {1, 2, 6, 100};
    for (int j = 1; j <= 4; ++j) {
      peer.handle(0.1 * j, ModelArrived{j, 0, make_params({values[j - 1]})}, out);
    }
    peer.handle(1, GradientDone{{0.0f}, {}}, out);
    EXPECT_EQ(peer.iteration(), 1);
    return peer.model()->values()[0];
  };
  EXPECT_EQ(update("trimmed_mean"), 3.0f);  // (1 + 2 + 6) / 3
  EXPECT_EQ(update("median"), 2.0f);
}

TEST(Aggregation, AnOutlyingNeighbourIsTrimmedAway) {
  const std::vector<float> own = {1, -1}, one = {2, -2}, far = {1e30f, -1e30f};
  const auto x = one_update("trimmed_mean", own, one, far, {0, 0});
  EXPECT_EQ(x[0], 2.0f);
  EXPECT_EQ(x[1], -2.0f);
}

TEST(Aggregation, ClippedGossipClipsTheFarthestNeighbourToTheNextOnesDistance) {
  // Own (0, 0); neighbour 1 at distance 5 (3, 4); neighbour 3 far off at (600, 800), distance
  // 1000. b = 1: tau = 5, the second largest distance. Neighbour 3's difference is clipped
  // to length 5: (3, 4). Ring weights a third each:
  //   x = 0 + (3, 4) / 3 + (3, 4) / 3 = (2, 8 / 3), then - 0.5 g.
  const auto x = one_update("clipped_gossip", {0, 0}, {3, 4}, {600, 800}, {2, -2});
  ASSERT_EQ(x.size(), 2u);
  EXPECT_NEAR(x[0], 2.0f - 1.0f, 1e-5);
  EXPECT_NEAR(x[1], 8.0f / 3 + 1.0f, 1e-5);
  // However far off neighbour 3 is, the peer moves by at most what neighbour 1 moves it.
  const auto farther = one_update("clipped_gossip", {0, 0}, {3, 4}, {6e20f, 8e20f}, {0, 0});
  EXPECT_NEAR(farther[0], 2.0f, 1e-5);
  EXPECT_NEAR(farther[1], 8.0f / 3, 1e-5);
}

TEST(Aggregation, ClippedGossipWithNoFaultyNeighboursIsTheMean) {
  // b = 0: tau is the largest distance, nothing is clipped.
  const auto clipped = one_update("clipped_gossip", {3, 0}, {6, 3}, {0, 6}, {2, -2}, 0);
  const auto mean = one_update("mean", {3, 0}, {6, 3}, {0, 6}, {2, -2});
  EXPECT_NEAR(clipped[0], mean[0], 1e-5);
  EXPECT_NEAR(clipped[1], mean[1], 1e-5);
}

TEST(Aggregation, ClippedGossipWithNoMoreNeighboursHeardThanFaultyOnesTakesTheLocalStepOnly) {
  // One neighbour heard from, as many as b = 1: tau = 0, however far off it is. 1 - 0.5 * 2.
  EXPECT_EQ(update_with_three_gone("clipped_gossip", 1.0f, 1e20f, 2.0f), 0.0f);
}

TEST(Aggregation, ClippedGossipMeasuresItsRadiusOverEveryNeighbourWhenFewWereUsed) {
  // Static, one backup: iteration 1 mixes neighbour 1 alone (3's tag-0 model is stale). With
  // b = 1 the used one cannot set a radius by itself: the model of 3 it mixed last, at
  // distance 1, does,
  // so neighbour 1 far off is clipped to 1 instead of the peer not mixing at all. (Iteration
  // 0 mixed both: tau = 0, the nearer one's distance, so x(1) = 0.)
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 3;
  config.optimizer.lr = 0.5;
  config.aggregation = "clipped_gossip";
  config.policy.kind = PolicyKind::kStatic;
  config.policy.backups = 1;
  config.m_min = 1;
  PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, ModelArrived{1, 0, make_params({0.0f})}, out);
  peer.handle(0.2, ModelArrived{3, 0, make_params({1.0f})}, out);
  peer.handle(0.3, GradientDone{{0.0f}, {}}, out);
  ASSERT_EQ(peer.iteration(), 1);
  ASSERT_EQ(peer.model()->values()[0], 0.0f);
  peer.handle(0.5, ModelArrived{1, 1, make_params({1e20f})}, out);
  peer.handle(0.6, GradientDone{{0.0f}, {}}, out);
  ASSERT_EQ(peer.iteration(), 2);
  // x = 0 + clip(1e20, tau = 1) / 3.
  EXPECT_NEAR(peer.model()->values()[0], 1.0f / 3, 1e-6);
}

TEST(Aggregation, ClippedGossipRefusesAPeerWithNoMoreNeighboursThanFaultyOnes) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.aggregation = "clipped_gossip";
  config.faulty_neighbours = 2;
  try {
    PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("peer 0 has 2: it would never mix"));
  }
  config.clipping_radius = 0.5;  // a given radius needs no neighbour to measure it
  EXPECT_NO_THROW(PeerProtocol(0, topo.schedule, config, make_params({0.0f})));
}

TEST(Aggregation, AFixedClippingRadiusBoundsEveryNeighboursPull) {
  // Radius 0.5 given: the lone neighbour far off is clipped to 0.5 (not to 0), at its weight
  // 1/3 (return_to_self). 1 + 0.5 / 3 - 0.5 * 2.
  EXPECT_NEAR(update_with_three_gone("clipped_gossip", 1.0f, 1e20f, 2.0f, 0.5), 1.0f / 6, 1e-6);
  // A neighbour within the radius mixes as under mean: 1 + (1.25 - 1) / 3 - 1.
  EXPECT_NEAR(update_with_three_gone("clipped_gossip", 1.0f, 1.25f, 2.0f, 0.5),
              update_with_three_gone("mean", 1.0f, 1.25f, 2.0f), 1e-6);
}

TEST(Aggregation, AnUnknownRuleIsRefusedNamingTheRules) {
  EXPECT_THAT(parse_aggregation("mean"), "mean");
  try {
    parse_aggregation("mode");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr(
            "unknown aggregation \"mode\"; expected mean, median, trimmed_mean, clipped_gossip"));
  }
  EXPECT_THROW(one_update("mode", {0}, {0}, {0}, {0}), std::invalid_argument);
}

TEST(Aggregation, ARuleOtherThanTheMeanIsOnlyForPlainGossip) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig push_sum;
  push_sum.push_sum = true;
  ProtocolConfig compressed;
  compressed.order = UpdateOrder::kAdaptThenCombine;
  compressed.compression = compression::CompressorSpec{};
  ProtocolConfig ad_psgd;
  ad_psgd.policy.kind = PolicyKind::kAdPsgd;
  for (ProtocolConfig config : {push_sum, compressed, ad_psgd}) {
    config.aggregation = "median";
    try {
      PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("is a rule of plain gossip"));
    }
  }
}

}  // namespace
}  // namespace fastk::consensus
