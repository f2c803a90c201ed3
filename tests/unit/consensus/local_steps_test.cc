// [consensus] local_steps = H (consensus/variants/local_steps.cc): a peer gossips on every
// H-th iteration and takes local SGD steps in between. Peer 0 of a ring of four, H = 3.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <variant>
#include <vector>

#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using ::testing::HasSubstr;

template <typename T>
int count_of(const Actions& out) {
  int n = 0;
  for (const auto& a : out) n += std::holds_alternative<T>(a) ? 1 : 0;
  return n;
}

ProtocolConfig local_steps(int h) {
  ProtocolConfig config;
  config.iterations = 6;
  config.optimizer.lr = 0.5;
  config.local_steps = h;
  return config;
}

TEST(LocalSteps, StepsLocallyAndGossipsOnEveryHthIteration) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  PeerProtocol peer(0, topo.schedule, local_steps(3), make_params({0.0f}));
  Actions out;
  peer.start(0, out);
  // Iterations 0 and 1: no model goes out, nobody is awaited, x moves by -lr g.
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(count_of<SendParams>(out), 0) << k;
    EXPECT_EQ(count_of<StartGradient>(out), 1) << k;
    out.clear();
    peer.handle(k + 0.5, GradientDone{{2.0f}, {}}, out);
    ASSERT_EQ(peer.iteration(), k + 1);
    const auto& done = std::get<IterationCompleted>(out[0]).record;
    EXPECT_EQ(done.neighbours, 0);
    EXPECT_EQ(done.awaited, 0);
    EXPECT_TRUE(done.neighbour_records.empty());
  }
  EXPECT_EQ(peer.model()->values()[0], -2.0f);
  // Iteration 2 gossips: x(2) goes out with tag 2, and the update waits for both neighbours.
  ASSERT_EQ(count_of<SendParams>(out), 1);
  for (const auto& a : out) {
    if (const auto* send = std::get_if<SendParams>(&a)) {
      EXPECT_EQ(send->tag, 2);
    }
  }
  out.clear();
  peer.handle(2.5, GradientDone{{0.0f}, {}}, out);
  EXPECT_EQ(peer.iteration(), 2);
  peer.handle(2.6, ModelArrived{1, 2, make_params({1.0f})}, out);
  EXPECT_EQ(peer.iteration(), 2);
  peer.handle(2.7, ModelArrived{3, 2, make_params({4.0f})}, out);
  ASSERT_EQ(peer.iteration(), 3);
  // Ring weights a third each: (-2 + 1 + 4) / 3.
  EXPECT_FLOAT_EQ(peer.model()->values()[0], 1.0f);
}

TEST(LocalSteps, ModelsOfEarlierGossipRoundsAreStale) {
  // A neighbour's tag-2 model does not count for the gossip of iteration 5.
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  PeerProtocol peer(0, topo.schedule, local_steps(3), make_params({0.0f}));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, ModelArrived{1, 2, make_params({0.0f})}, out);
  peer.handle(0.2, ModelArrived{3, 2, make_params({0.0f})}, out);
  for (int k = 0; k < 5; ++k) peer.handle(k + 0.5, GradientDone{{0.0f}, {}}, out);
  EXPECT_EQ(peer.iteration(), 5);
  peer.handle(6, GradientDone{{0.0f}, {}}, out);
  EXPECT_EQ(peer.iteration(), 5);  // waits for tag 5
  peer.handle(6.1, ModelArrived{1, 5, make_params({0.0f})}, out);
  peer.handle(6.2, ModelArrived{3, 5, make_params({0.0f})}, out);
  EXPECT_TRUE(peer.finished());
}

TEST(LocalSteps, GossipsWalkThroughEveryRoundOfATimeVaryingGraph) {
  // One-peer exponential on 8 peers cycles hops 1, 2, 4. Gossiping on every third iteration
  // must not land on hop 4 every time (the peers would mix in fixed pairs): gossip g uses
  // round g.
  const auto topo = testing::make_topology(topology::TopologyKind::kOnePeerExponential, 8);
  ProtocolConfig config = local_steps(3);
  config.iterations = 18;
  std::vector<PeerId> partners;
  testing::SlowPeerDelays slow_peer(1);
  for (const IterationRecord& r : testing::run_records(topo.schedule, config, slow_peer)) {
    if (r.peer == 0 && !r.used.empty()) partners.push_back(r.used[0]);
  }
  EXPECT_EQ(partners, (std::vector<PeerId>{7, 6, 4, 7, 6, 4}));  // from 0 - hop: 1, 2, 4
}

TEST(LocalSteps, TheAdaptivePolicyMeasuresDisagreementEveryNGossips) {
  // H = 2 and disagreement_every = 2: counted in iterations the two would never meet (every
  // gossip has k odd); counted in gossips, every second gossip measures it.
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = local_steps(2);
  config.iterations = 40;
  config.policy.kind = PolicyKind::kAdaptive;
  config.policy.disagreement_every = 2;
  bool measured = false;
  testing::SlowPeerDelays slow_peer(1);
  for (const IterationRecord& r : testing::run_records(topo.schedule, config, slow_peer)) {
    measured = measured || !std::isnan(r.estimates.disagreement);
  }
  EXPECT_TRUE(measured);
}

TEST(LocalSteps, NeighboursSilentBetweenGossipsAreNotGone) {
  // Gradients of 1 s, models 1.2 s on the way (they come after the own gradient), a silence
  // timeout of 1.5 s, shorter than the 4 s between gossips: silence counts from the start of
  // each iteration, so under full every gossip still waits for both neighbours (counted from
  // the last model, both would be gone when the gossip begins, and nobody awaited).
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = local_steps(4);
  config.iterations = 40;
  config.silence_timeout_s = 1.5;
  testing::LambdaDelays delays;
  delays.link = [](PeerId, PeerId, std::int64_t) { return 1.2; };
  for (const IterationRecord& r : testing::run_records(topo.schedule, config, delays)) {
    if (r.neighbours > 0) {
      EXPECT_EQ(r.used.size(), 2u) << r.peer << " at " << r.iteration;
    }
  }
}

TEST(LocalSteps, WhatCannotTakeLocalStepsIsRefusedByName) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig push_sum = local_steps(2);
  push_sum.push_sum = true;
  ProtocolConfig gap = local_steps(2);
  gap.max_gap = 2;
  ProtocolConfig ad_psgd = local_steps(2);
  ad_psgd.policy.kind = PolicyKind::kAdPsgd;
  ProtocolConfig stale = local_steps(2);
  stale.staleness = 2;
  const std::pair<ProtocolConfig, const char*> cases[] = {
      {push_sum, "and push_sum exclude each other"},
      {gap, "and max_gap exclude each other"},
      {ad_psgd, "and policy ad_psgd exclude each other"},
      {stale, "needs staleness < local_steps"}};
  for (const auto& [config, why] : cases) {
    try {
      PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
      ADD_FAILURE() << "accepted: " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("consensus.local_steps > 1 ") + why));
    }
  }
}

}  // namespace
}  // namespace fastk::consensus
