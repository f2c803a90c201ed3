// [consensus] validate (consensus/variants/validated.cc): before an update a peer scores each
// model it would mix by its loss on a batch of its own data and leaves out those worse than
// its own model's by more than validation_margin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include "consensus/model_distance.h"
#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using ::testing::HasSubstr;

ProtocolConfig validating(int iterations = 3) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = 0.5;
  config.validate = true;
  config.validation_score = ValidationScore::kLoss;
  config.validation_penalty = default_validation_penalty(ValidationScore::kLoss);
  config.validation_batch = 8;
  config.validation_margin = 0.1;
  return config;
}

template <typename T>
const T* first_of(const Actions& out) {
  for (const auto& a : out) {
    if (const auto* t = std::get_if<T>(&a)) return t;
  }
  return nullptr;
}

// Peer 0 of a ring of four started, both neighbours' models of tag 0 in (1.0 from
// neighbour 1, 5.0 from neighbour 3) and its gradient done: it asks for the losses.
void ready_to_validate(PeerProtocol& peer, Actions& out) {
  peer.start(0, out);
  peer.handle(0.1, ModelArrived{1, 0, make_params({1.0f})}, out);
  peer.handle(0.2, ModelArrived{3, 0, make_params({5.0f})}, out);
  peer.handle(0.5, GradientDone{{2.0f}, {}}, out);
}

// Peer 0 of a ring of four (neighbours 1 and 3), with both neighbours' models of tag 0 in.
class OnePeer : public ::testing::Test {
 protected:
  void SetUp() override { ready_to_validate(peer_, out_); }
  topology::Topology topo_ = testing::make_topology(topology::TopologyKind::kRing, 4);
  PeerProtocol peer_{0, topo_.schedule, validating(), make_params({0.0f})};
  Actions out_;
};

TEST_F(OnePeer, AsksForTheLossesOfItsOwnAndTheNeighboursModelsBeforeTheUpdate) {
  EXPECT_EQ(first_of<IterationCompleted>(out_), nullptr) << "no update before the losses";
  const auto* ask = first_of<StartValidation>(out_);
  ASSERT_NE(ask, nullptr);
  EXPECT_EQ(ask->iteration, 0);
  EXPECT_EQ(ask->batch, 8);
  ASSERT_EQ(ask->models.size(), 3u);
  EXPECT_EQ(ask->models[0]->values()[0], 0.0f);  // the own model first
  EXPECT_EQ(ask->models[1]->values()[0], 1.0f);  // then in receive_from order
  EXPECT_EQ(ask->models[2]->values()[0], 5.0f);
}

TEST_F(OnePeer, LeavesOutAModelWorseThanItsOwnByMoreThanTheMargin) {
  out_.clear();
  // Own 1.0; neighbour 1 at 1.05 (within the margin), neighbour 3 at 1.2 (not).
  peer_.handle(0.6, ValidationDone{0, {1.0, 1.05, 1.2}}, out_);
  const auto* done = first_of<IterationCompleted>(out_);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->record.used, std::vector<PeerId>{1});
  EXPECT_EQ(done->record.rejected, 1);
  EXPECT_EQ(peer_.iteration(), 1);
}

TEST_F(OnePeer, ANonFiniteLossIsLeftOutUnlessTheOwnIsNotFiniteEither) {
  out_.clear();
  const double inf = std::numeric_limits<double>::infinity();
  peer_.handle(0.6, ValidationDone{0, {1.0, std::nan(""), inf}}, out_);
  ASSERT_NE(first_of<IterationCompleted>(out_), nullptr);
  EXPECT_TRUE(first_of<IterationCompleted>(out_)->record.used.empty());
  EXPECT_EQ(first_of<IterationCompleted>(out_)->record.rejected, 2);

  PeerProtocol lost(0, topo_.schedule, validating(), make_params({0.0f}));
  Actions out;
  ready_to_validate(lost, out);
  out.clear();
  lost.handle(0.6, ValidationDone{0, {inf, 7.0, std::nan("")}}, out);
  ASSERT_NE(first_of<IterationCompleted>(out), nullptr);
  EXPECT_EQ(first_of<IterationCompleted>(out)->record.used, std::vector<PeerId>{1})
      << "a peer whose own loss is not finite keeps every finite one: they are its way back";
}

TEST_F(OnePeer, LossesOfAnotherIterationAreIgnoredAndAWrongCountIsARuntimeBug) {
  out_.clear();
  peer_.handle(0.6, ValidationDone{5, {1.0, 1.0, 1.0}}, out_);
  EXPECT_EQ(first_of<IterationCompleted>(out_), nullptr);
  EXPECT_THROW(peer_.handle(0.7, ValidationDone{0, {1.0, 1.0}}, out_), std::logic_error);
}

// A policy other than full mixes a neighbour's newest model: one that comes while the
// losses are computed replaces a scored one, and only it is scored next, before any mix.
TEST(Validation, ANewerModelThatCameMeanwhileIsScoredAloneBeforeTheMix) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = validating();
  config.policy.kind = PolicyKind::kStatic;  // backups 0: waits for both, mixes the newest
  PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
  Actions out;
  ready_to_validate(peer, out);
  ASSERT_EQ(first_of<StartValidation>(out)->models.size(), 3u);
  out.clear();
  const Params newer = make_params({7.0f});
  peer.handle(0.6, ModelArrived{1, 1, newer}, out);
  peer.handle(0.7, ValidationDone{0, {1.0, 1.0, 1.0}}, out);
  EXPECT_EQ(first_of<IterationCompleted>(out), nullptr) << "mixed a model nobody scored";
  const auto* again = first_of<StartValidation>(out);
  ASSERT_NE(again, nullptr);
  ASSERT_EQ(again->models.size(), 1u) << "the own and neighbour 3's losses are kept";
  EXPECT_EQ(again->models[0], newer);
  out.clear();
  peer.handle(0.8, ValidationDone{0, {9.0}}, out);
  const auto* done = first_of<IterationCompleted>(out);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->record.used, std::vector<PeerId>{3});
  EXPECT_EQ(done->record.rejected, 1);
  EXPECT_NEAR(done->record.validation_s, 0.3, 1e-12) << "0.5 to 0.8: two validations";
  EXPECT_NEAR(done->record.wait_s(), 0.0, 1e-12) << "validation is not waiting";
}

TEST(Validation, NeedsCombineThenAdapt) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = validating();
  config.order = UpdateOrder::kAdaptThenCombine;
  EXPECT_THROW(
      {
        try {
          PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
        } catch (const std::invalid_argument& e) {
          EXPECT_THAT(e.what(), HasSubstr("combine_then_adapt"));
          throw;
        }
      },
      std::invalid_argument);
}

// Zeno's penalty: a model as good on the batch but far from the own one fails. Neighbour 3's
// model is 5 away: 0.01 x 25 = 0.25 > the margin; neighbour 1's is 1 away: 0.01.
TEST(Validation, AFarModelFailsEvenWithTheSameLoss) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = validating();
  config.validation_penalty = 0.01;
  PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
  Actions out;
  ready_to_validate(peer, out);
  out.clear();
  peer.handle(0.6, ValidationDone{0, {1.0, 1.0, 1.0}}, out);
  ASSERT_NE(first_of<IterationCompleted>(out), nullptr);
  EXPECT_EQ(first_of<IterationCompleted>(out)->record.used, std::vector<PeerId>{1});
}

TEST(Validation, AnUnaskedValidationIsARuntimeBug) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = validating();
  config.validate = false;
  PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
  Actions out;
  peer.start(0, out);
  EXPECT_THROW(peer.handle(0.5, ValidationDone{0, {1.0}}, out), std::logic_error);
}

TEST(Validation, IsRefusedWhereTheVariantMixesInItsOwnWay) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig push_sum = validating();
  push_sum.push_sum = true;
  ProtocolConfig ad_psgd = validating();
  ad_psgd.policy.kind = PolicyKind::kAdPsgd;
  for (const ProtocolConfig& config : {push_sum, ad_psgd}) {
    try {
      PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("consensus.validate is for plain gossip"));
    }
  }
}

// A whole run in the simulator's engine: peer 2 of a ring of four sends models scaled far
// off. Without validation every model ends far off; with it the honest peers leave peer 2's
// model out every time and end where honest peers end.
TEST(Validation, HonestPeersLeaveOutALargeAttackersModelEveryTime) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  testing::LambdaDelays delays;
  ProtocolConfig config = validating(20);
  config.optimizer.lr = 0.1;
  config.attack = AttackSpec{{2}, AttackKind::kLarge, 0};
  const auto run = [&](bool validate, ValidationScore score) {
    ProtocolConfig c = config;
    c.validate = validate;
    c.validation_score = score;
    c.validation_penalty = default_validation_penalty(score);
    testing::LeastSquares model(2, 40, 2, 4);
    VirtualNetwork net(testing::make_peers(topo.schedule, c, {0.5f, -0.5f}), delays, model);
    std::vector<IterationRecord> records;
    net.on_record = [&](const IterationRecord& r) { records.push_back(r); };
    net.start();
    net.run();
    EXPECT_TRUE(net.all_finished());
    return std::pair{records, net.peer(0).model()->values()[0]};
  };
  const auto [plain, plain_x] = run(false, ValidationScore::kLoss);
  EXPECT_GT(std::abs(plain_x), 100.0) << "the attack works without validation";
  for (ValidationScore score : {ValidationScore::kLoss, ValidationScore::kFirstOrder}) {
    const auto [checked, checked_x] = run(true, score);
    EXPECT_LT(std::abs(checked_x), 10.0) << to_string(score);
    for (const IterationRecord& r : checked) {
      if (r.peer == 2) continue;
      const bool next_to_attacker = r.peer == 1 || r.peer == 3;
      EXPECT_EQ(r.rejected, next_to_attacker ? 1 : 0)
          << to_string(score) << ": " << r.peer << " at " << r.iteration;
      for (PeerId used : r.used) EXPECT_NE(used, 2);
    }
  }
}

// validation_score = "first_order" (first_order_validated.cc): the loss change is estimated
// from the peer's gradient, <g, x_j - x_i> + rho |x_j - x_i|^2, with no validation batch.
class FirstOrder : public ::testing::Test {
 protected:
  // Peer 0 (model 0) of a ring of four, neighbour 1's model at 1 and neighbour 3's at 5 in,
  // then its gradient g: the update follows at once.
  const IterationCompleted* update_with(float g, double penalty) {
    ProtocolConfig config = validating();
    config.validation_score = ValidationScore::kFirstOrder;
    config.validation_penalty = penalty;
    peer_.emplace(0, topo_.schedule, config, make_params({0.0f}));
    peer_->start(0, out_);
    peer_->handle(0.1, ModelArrived{1, 0, make_params({1.0f})}, out_);
    peer_->handle(0.2, ModelArrived{3, 0, make_params({5.0f})}, out_);
    peer_->handle(0.5, GradientDone{{g}, {}}, out_);
    EXPECT_EQ(first_of<StartValidation>(out_), nullptr) << "no batch, no losses to ask for";
    return first_of<IterationCompleted>(out_);
  }
  topology::Topology topo_ = testing::make_topology(topology::TopologyKind::kRing, 4);
  std::optional<PeerProtocol> peer_;
  Actions out_;
};

TEST_F(FirstOrder, KeepsAModelTheGradientSaysLowersTheLossUnlessItIsFar) {
  // g = -1: moving up lowers the loss. Neighbour 1: -1 + 0.3 = -0.7, kept; neighbour 3:
  // -5 + 0.3 x 25 = 2.5, left out by its distance.
  const auto* done = update_with(-1.0f, 0.3);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->record.used, std::vector<PeerId>{1});
  EXPECT_EQ(done->record.rejected, 1);
  EXPECT_EQ(done->record.validation_s, 0.0);
}

// A model that comes after the gradient is scored as it comes (took_model), with the same
// result as at the update.
TEST(FirstOrderValidation, ScoresAModelThatComesAfterTheGradientTheSameWay) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 4);
  ProtocolConfig config = validating();
  config.validation_score = ValidationScore::kFirstOrder;
  config.validation_penalty = 0.3;
  PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
  Actions out;
  peer.start(0, out);
  peer.handle(0.1, GradientDone{{-1.0f}, {}}, out);
  peer.handle(0.2, ModelArrived{1, 0, make_params({1.0f})}, out);
  EXPECT_EQ(first_of<IterationCompleted>(out), nullptr) << "waits for neighbour 3";
  peer.handle(0.3, ModelArrived{3, 0, make_params({5.0f})}, out);
  const auto* done = first_of<IterationCompleted>(out);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->record.used, std::vector<PeerId>{1});
  EXPECT_EQ(done->record.rejected, 1);
  EXPECT_EQ(done->record.terms_mixed, 1 + 2) << "one mixed, two scored";
}

TEST_F(FirstOrder, LeavesOutAModelTheGradientSaysRaisesTheLoss) {
  // g = +1, no penalty: neighbour 1 raises the loss by about 1, neighbour 3 by about 5.
  const auto* done = update_with(1.0f, 0.0);
  ASSERT_NE(done, nullptr);
  EXPECT_TRUE(done->record.used.empty());
  EXPECT_EQ(done->record.rejected, 2);
}

}  // namespace
}  // namespace fastk::consensus

namespace fastk::consensus {
namespace {

// The first-order score's one pass (model_distance.cc, float lanes) against a plain
// double-precision sum, on a vector whose length leaves a tail past the lanes.
TEST(SlopeAndDistance, AgreesWithAPlainDoubleSum) {
  std::vector<float> g(1003), own(1003), model(1003);
  for (std::size_t i = 0; i < g.size(); ++i) {
    g[i] = std::sin(0.37f * static_cast<float>(i));
    own[i] = 0.01f * static_cast<float>(i % 17);
    model[i] = own[i] + 0.5f * std::cos(0.11f * static_cast<float>(i));
  }
  double slope = 0, squared = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double d = static_cast<double>(model[i]) - static_cast<double>(own[i]);
    slope += static_cast<double>(g[i]) * d;
    squared += d * d;
  }
  const SlopeAndDistance s = slope_and_squared_distance(g, own, model);
  EXPECT_NEAR(s.slope, slope, 1e-4 * std::abs(slope) + 1e-4);
  EXPECT_NEAR(s.squared, squared, 1e-5 * squared);
  EXPECT_EQ(slope_and_squared_distance(g, own, own).squared, 0.0);
}

}  // namespace
}  // namespace fastk::consensus
