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
std::vector<float> one_update(const std::string& aggregation, const std::vector<float>& own,
                              const std::vector<float>& one, const std::vector<float>& three,
                              const std::vector<float>& gradient) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 2;
  config.optimizer.lr = 0.5;
  config.aggregation = aggregation;
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

TEST(Aggregation, AnEvenCountTakesTheMeanOfTheTwoMiddleValues) {
  // Policy full on a ring of four: the own model and two neighbours make three values; with
  // one neighbour gone (its BYE), two: their midpoint.
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 2;
  config.aggregation = "median";
  PeerProtocol peer(0, topo.schedule, config, make_params({1.0f}));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, NeighbourLeft{3}, out);
  peer.handle(0.2, ModelArrived{1, 0, make_params({4.0f})}, out);
  peer.handle(0.3, GradientDone{{0.0f}, {}}, out);
  ASSERT_EQ(peer.iteration(), 1);
  EXPECT_EQ(peer.model()->values()[0], 2.5f);
}

TEST(Aggregation, AnUnknownRuleIsRefusedNamingTheRules) {
  EXPECT_THAT(parse_aggregation("mean"), "mean");
  try {
    parse_aggregation("mode");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown aggregation \"mode\"; expected mean, median"));
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
