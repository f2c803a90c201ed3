// Forging attackers ([attack], consensus/attack.h): peer 0 of a ring of four, an attacker,
// sends forged models in place of its own and mixes nothing in; an honest peer is unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

struct Sent {
  std::vector<std::vector<float>> models;  // every SendParams, in order
  std::vector<float> x1;                   // peer 0's model after one update
};

// Peer 0 (neighbours 1 and 3) under `kind` with `scale`, own model {1, 2}, lr 0.5: what it
// sends in iterations 0 and 1, its neighbours having sent {3, 6} and {5, 10} for iteration 0.
Sent run_attacker(AttackKind kind, double scale = 0, PeerId attacker = 0) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 3;
  config.optimizer.lr = 0.5;
  config.attack = AttackSpec{{attacker}, kind, scale};
  PeerProtocol peer(0, topo.schedule, config, make_params({1.0f, 2.0f}));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, ModelArrived{1, 0, make_params({3.0f, 6.0f})}, out);
  peer.handle(0.2, ModelArrived{3, 0, make_params({5.0f, 10.0f})}, out);
  peer.handle(0.3, GradientDone{{2.0f, 2.0f}, {}}, out);
  Sent sent;
  for (const Action& a : out) {
    if (const auto* send = std::get_if<SendParams>(&a)) {
      const auto v = send->params->values();
      sent.models.emplace_back(v.begin(), v.end());
    }
  }
  const auto x = peer.model()->values();
  sent.x1.assign(x.begin(), x.end());
  return sent;
}

TEST(Attack, AnHonestPeerOfAnAttackedRunMixesAndSendsAsBefore) {
  const Sent honest = run_attacker(AttackKind::kLarge, 0, /*attacker=*/2);
  ASSERT_EQ(honest.models.size(), 2u);
  EXPECT_EQ(honest.models[0], (std::vector<float>{1, 2}));
  // (1 + 3 + 5) / 3 - 0.5 * 2 = 2; (2 + 6 + 10) / 3 - 1 = 5.
  EXPECT_NEAR(honest.x1[0], 2.0f, 1e-6);
  EXPECT_NEAR(honest.x1[1], 5.0f, 1e-6);
}

TEST(Attack, AnAttackerMixesNothingInAndTakesItsLocalStep) {
  for (AttackKind kind :
       {AttackKind::kLarge, AttackKind::kSignFlip, AttackKind::kAlie, AttackKind::kNoise}) {
    const Sent sent = run_attacker(kind);
    EXPECT_EQ(sent.x1, (std::vector<float>{0, 1})) << to_string(kind);  // {1, 2} - 0.5 * 2
  }
}

TEST(Attack, LargeAndSignFlipForgeFromTheOwnModel) {
  const Sent large = run_attacker(AttackKind::kLarge);
  ASSERT_EQ(large.models.size(), 2u);
  EXPECT_EQ(large.models[0], (std::vector<float>{1000, 1000}));
  EXPECT_EQ(run_attacker(AttackKind::kLarge, 7).models[1], (std::vector<float>{7, 7}));
  const Sent flipped = run_attacker(AttackKind::kSignFlip);
  EXPECT_EQ(flipped.models[0], (std::vector<float>{-1, -2}));
  EXPECT_EQ(flipped.models[1], (std::vector<float>{-0.0f, -1}));
  EXPECT_EQ(run_attacker(AttackKind::kSignFlip, 3).models[0], (std::vector<float>{-3, -6}));
}

TEST(Attack, AlieSendsTheNeighboursMeanMinusZSpreads) {
  // Before any neighbour's model: its own. Then per coordinate: mean {4, 8}, population
  // standard deviation {1, 2}; z = 2 given.
  const Sent given = run_attacker(AttackKind::kAlie, 2);
  ASSERT_EQ(given.models.size(), 2u);
  EXPECT_EQ(given.models[0], (std::vector<float>{1, 2}));
  EXPECT_NEAR(given.models[1][0], 4 - 2 * 1, 1e-6);
  EXPECT_NEAR(given.models[1][1], 8 - 2 * 2, 1e-6);
  // Unless given, z from the neighbourhood: n = 3, s = 1, Phi^-1(2/3) = 0.4307.
  EXPECT_NEAR(alie_z(2), 0.4307, 1e-4);
  const Sent derived = run_attacker(AttackKind::kAlie);
  EXPECT_NEAR(derived.models[1][0], 4 - alie_z(2) * 1, 1e-5);
}

TEST(Attack, NoiseIsGaussianAroundTheOwnModelAndTheSameEveryRun) {
  const Sent a = run_attacker(AttackKind::kNoise, 0.5), b = run_attacker(AttackKind::kNoise, 0.5);
  EXPECT_EQ(a.models, b.models);
  ASSERT_EQ(a.models.size(), 2u);
  EXPECT_NE(a.models[0], (std::vector<float>{1, 2}));
  EXPECT_NE(a.models[0][0] - 1, a.models[1][0] - 0) << "every tag draws afresh";
  for (float v : a.models[0]) EXPECT_TRUE(std::isfinite(v));
}

TEST(Attack, KindsAreNamedAndAnUnknownOneIsRefused) {
  for (const char* name : {"large", "sign_flip", "alie", "noise", "label_flip"}) {
    EXPECT_EQ(to_string(parse_attack_kind(name)), name);
  }
  EXPECT_THAT([] { parse_attack_kind("flood"); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr(
                  "unknown attack kind \"flood\"; expected large, sign_flip, alie, noise")));
}

}  // namespace
}  // namespace fastk::consensus
