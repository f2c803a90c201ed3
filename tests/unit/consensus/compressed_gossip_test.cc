// Compressed gossip in the protocol (CHOCO-SGD, docs/compression.md): peers send compressed
// differences of their public estimates and mix the estimates. Under full every copy of an
// estimate is alike at each update, so with symmetric weights the mix moves no mass: the sum
// of the models changes only by the gradient steps. Under backup workers late differences are
// applied when they come, in order, and nothing is dropped.
#include "consensus/variants/compressed_gossip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"
#include "topology/directed.h"

namespace fastk::consensus {
namespace {

// A peer's copy of `of`'s public estimate (its own for itself).
std::span<const float> estimate(const PeerProtocol& peer, PeerId of) {
  return dynamic_cast<const CompressedGossip&>(peer.variant()).public_estimate(of);
}

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

constexpr int kDim = 40;
constexpr double kLr = 0.05;

std::vector<float> initial_model() {
  std::vector<float> x(kDim);
  for (int c = 0; c < kDim; ++c)
    x[static_cast<std::size_t>(c)] = 0.05f * static_cast<float>(c % 9) - 0.2f;
  return x;
}

ProtocolConfig compressed_config(compression::Kind kind, double gamma, std::int64_t iterations) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = kLr;
  config.order = UpdateOrder::kAdaptThenCombine;
  compression::CompressorSpec spec;
  spec.kind = kind;
  spec.chunk = 8;
  spec.fraction = 0.25;
  config.compression = spec;
  config.consensus_step = gamma;
  config.seed = 11;
  return config;
}

// Sums every gradient handed out: what the steps took off the models in total.
class SummingGradients final : public GradientSource {
 public:
  explicit SummingGradients(LeastSquares& inner) : inner_(inner), total_(kDim, 0.0) {}
  void begin(PeerId peer, const StartGradient& request) override { inner_.begin(peer, request); }
  std::vector<double> losses(PeerId peer, const StartValidation& v) override {
    return inner_.losses(peer, v);
  }
  GradientResult collect(PeerId peer, std::int64_t k) override {
    GradientResult r = inner_.collect(peer, k);
    for (std::size_t c = 0; c < r.gradient.size(); ++c) total_[c] += r.gradient[c];
    return r;
  }
  const std::vector<double>& total() const { return total_; }

 private:
  LeastSquares& inner_;
  std::vector<double> total_;
};

std::vector<double> sum_of_models(const VirtualNetwork& net) {
  std::vector<double> sum(kDim, 0.0);
  for (PeerId p = 0; p < net.size(); ++p) {
    const auto x = net.peer(p).model()->values();
    for (std::size_t c = 0; c < sum.size(); ++c) sum[c] += x[c];
  }
  return sum;
}

TEST(CompressedGossip, UnderFullTheSumOfModelsChangesOnlyByTheSteps) {
  for (compression::Kind kind :
       {compression::Kind::kInt8, compression::Kind::kTopK, compression::Kind::kRandomK}) {
    const auto topo = testing::make_topology(TopologyKind::kRing, 8);
    LambdaDelays delays;
    delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.3 * ((i * 7 + k) % 5); };
    LeastSquares model(kDim, 400, 2, 8);
    SummingGradients gradients(model);
    VirtualNetwork net(
        testing::make_peers(topo.schedule, compressed_config(kind, 0.5, 60), initial_model()),
        delays, gradients);
    net.start();
    net.run();
    ASSERT_TRUE(net.all_finished()) << to_string(kind);
    const auto sum = sum_of_models(net);
    const auto x0 = initial_model();
    for (std::size_t c = 0; c < sum.size(); ++c) {
      EXPECT_NEAR(sum[c], 8 * x0[c] - kLr * gradients.total()[c], 1e-3)
          << to_string(kind) << " " << c;
    }
    for (PeerId p = 0; p < 8; ++p) EXPECT_EQ(net.peer(p).dropped_messages(), 0);
  }
}

std::vector<std::vector<float>> models_of(const VirtualNetwork& net) {
  std::vector<std::vector<float>> models;
  for (PeerId p = 0; p < net.size(); ++p) {
    const auto x = net.peer(p).model()->values();
    models.emplace_back(x.begin(), x.end());
  }
  return models;
}

// max_i ||x_i - mean|| / ||mean||: how far the peers are from agreeing.
double consensus_distance(const std::vector<std::vector<float>>& models) {
  std::vector<double> mean(models[0].size(), 0.0);
  for (const auto& x : models) {
    for (std::size_t c = 0; c < x.size(); ++c) mean[c] += x[c] / static_cast<double>(models.size());
  }
  double worst = 0, norm = 0;
  for (double m : mean) norm += m * m;
  for (const auto& x : models) {
    double d = 0;
    for (std::size_t c = 0; c < x.size(); ++c) d += (x[c] - mean[c]) * (x[c] - mean[c]);
    worst = std::max(worst, d);
  }
  return std::sqrt(worst / norm);
}

// A ring of 8 with heterogeneous data under full: every peer's final model.
std::vector<std::vector<float>> run_ring(std::optional<compression::Kind> kind, double gamma,
                                         std::int64_t iterations) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.3 * ((i * 7 + k) % 5); };
  LeastSquares model(kDim, 400, 2, 8);
  ProtocolConfig config =
      compressed_config(kind.value_or(compression::Kind::kInt8), gamma, iterations);
  if (!kind) config.compression.reset();
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model()), delays, model);
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  return models_of(net);
}

// fp16 loses almost nothing: with gamma = 1 every peer ends close to its uncompressed run.
TEST(CompressedGossip, Fp16EndsCloseToUncompressedGossipPeerByPeer) {
  const auto plain = run_ring(std::nullopt, 1.0, 40);
  const auto fp16 = run_ring(compression::Kind::kFloat16, 1.0, 40);
  for (std::size_t p = 0; p < plain.size(); ++p) {
    for (std::size_t c = 0; c < plain[p].size(); ++c) {
      EXPECT_NEAR(fp16[p][c], plain[p][c], 2e-3) << "peer " << p << " value " << c;
    }
  }
}

// The peers agree about as well as uncompressed gossip makes them (heterogeneous data keep
// them apart by the gradients' spread): error feedback keeps the estimates on the models, so
// the mix pulls the models together. int8 loses nothing measurable; top_k, whose estimates
// lag their models by about n/k = 4 iterations, leaves them about 4x further apart
// (measured: 0.13 against 0.030).
TEST(CompressedGossip, ThePeersAgreeAboutAsWellAsWithoutCompression) {
  const double plain = consensus_distance(run_ring(std::nullopt, 1.0, 200));
  const double int8 = consensus_distance(run_ring(compression::Kind::kInt8, 1.0, 200));
  const double top_k = consensus_distance(run_ring(compression::Kind::kTopK, 0.5, 200));
  EXPECT_GT(plain, 0.0);
  EXPECT_LT(int8, 1.2 * plain) << "uncompressed " << plain;
  EXPECT_LT(top_k, 5 * plain) << "uncompressed " << plain << ", int8 " << int8;
}

// Under full each update applies exactly its iteration's differences: at the end every copy of
// an estimate equals its owner's, bit for bit.
TEST(CompressedGossip, UnderFullEveryCopyOfAnEstimateIsItsOwners) {
  for (compression::Kind kind : {compression::Kind::kInt8, compression::Kind::kRandomK}) {
    const auto topo = testing::make_topology(TopologyKind::kRing, 8);
    LambdaDelays delays;
    delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.7 * ((i * 5 + k) % 3); };
    LeastSquares model(kDim, 400, 2, 8);
    VirtualNetwork net(
        testing::make_peers(topo.schedule, compressed_config(kind, 0.5, 50), initial_model()),
        delays, model);
    net.start();
    net.run();
    ASSERT_TRUE(net.all_finished());
    for (PeerId p = 0; p < 8; ++p) {
      const auto own = estimate(net.peer(p), p);
      ASSERT_EQ(own.size(), static_cast<std::size_t>(kDim));
      for (PeerId j : {(p + 1) % 8, (p + 7) % 8}) {
        const auto copy = estimate(net.peer(j), p);
        EXPECT_TRUE(std::equal(own.begin(), own.end(), copy.begin(), copy.end()))
            << to_string(kind) << ": peer " << j << "'s copy of " << p << "'s estimate";
      }
    }
  }
}

// A neighbour that dies before sending anything leaves a frozen estimate: it must stop
// pulling. Then the others mix symmetrically among themselves, and the sum of their models
// changes only by their gradient steps (a frozen pull would move mass every iteration).
TEST(CompressedGossip, ADeadNeighboursFrozenEstimatePullsNoMore) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  LambdaDelays delays;
  LeastSquares model(kDim, 400, 2, 8);
  SummingGradients gradients(model);
  VirtualNetwork net(
      testing::make_peers(topo.schedule, compressed_config(compression::Kind::kInt8, 0.5, 40),
                          initial_model()),
      delays, gradients);
  net.start();
  net.remove_peer(0, 0.5);  // during its first gradient: its difference 0 never goes out
  net.run();
  const auto x0 = initial_model();
  std::vector<double> sum(kDim, 0.0);
  for (PeerId p = 1; p < 8; ++p) {
    EXPECT_EQ(net.peer(p).model()->values().size(), static_cast<std::size_t>(kDim));
    const auto x = net.peer(p).model()->values();
    for (std::size_t c = 0; c < sum.size(); ++c) sum[c] += x[c];
  }
  for (std::size_t c = 0; c < sum.size(); ++c) {
    EXPECT_NEAR(sum[c], 7 * x0[c] - kLr * gradients.total()[c], 1e-3) << c;
  }
}

// The adaptive policy measures the disagreement on the estimates (the models it mixes).
TEST(CompressedGossip, TheAdaptivePolicyGetsTheDisagreement) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  ProtocolConfig config = compressed_config(compression::Kind::kInt8, 1.0, 60);
  config.policy = {.kind = PolicyKind::kAdaptive};
  testing::SlowPeerDelays delays(5);
  LeastSquares model(kDim, 400, 2, 8);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model()), delays, model);
  int measured = 0;
  net.on_record = [&](const IterationRecord& r) {
    if (r.estimates.disagreement != kNotEstimated && r.estimates.disagreement > 0) ++measured;
  };
  net.start();
  net.run();
  ASSERT_TRUE(net.all_finished());
  EXPECT_GT(measured, 0);
  for (PeerId p = 0; p < 8; ++p) EXPECT_EQ(net.peer(p).dropped_messages(), 0) << p;
}

// Static b = 1 and peer 0 ten times slower: its neighbours go on without its difference and
// apply it when it comes. Every peer finishes and nothing is dropped (no gap, no repeat).
TEST(CompressedGossip, BackupWorkersApplyLateDifferencesInOrder) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  ProtocolConfig config = compressed_config(compression::Kind::kInt8, 0.5, 30);
  config.policy = {.kind = PolicyKind::kStatic, .backups = 1};
  testing::SlowPeerDelays delays(3);
  LeastSquares model(kDim, 400, 2, 8);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model()), delays, model);
  int skipped_peer0 = 0;
  // Each peer's own estimate after each of its differences (its update comes after it).
  std::vector<std::vector<std::vector<float>>> owned(8);
  net.on_record = [&](const IterationRecord& r) {
    if ((r.peer == 1 || r.peer == 7) && r.used.size() < 2) ++skipped_peer0;
    const auto own = estimate(net.peer(r.peer), r.peer);
    owned[r.peer].emplace_back(own.begin(), own.end());
  };
  net.start();
  net.run();
  ASSERT_TRUE(net.all_finished());
  EXPECT_GT(skipped_peer0, 20) << "peer 0's neighbours did not wait for it";
  for (PeerId p = 0; p < 8; ++p) EXPECT_EQ(net.peer(p).dropped_messages(), 0) << p;
  // Nothing was lost, repeated or reordered on the way (the early ones of a neighbour that led
  // by more than n included): every copy is, bit for bit, its owner's estimate after some
  // difference (a neighbour that finished first did not see the owner's last ones).
  int behind = 0;
  for (PeerId p = 0; p < 8; ++p) {
    for (PeerId j : {(p + 1) % 8, (p + 7) % 8}) {
      const auto copy = estimate(net.peer(j), p);
      const auto match = std::find_if(owned[p].begin(), owned[p].end(), [&](const auto& own) {
        return std::equal(own.begin(), own.end(), copy.begin(), copy.end());
      });
      EXPECT_NE(match, owned[p].end()) << "peer " << j << "'s copy of " << p << "'s estimate";
      if (match != owned[p].end() && match + 1 != owned[p].end()) ++behind;
    }
  }
  EXPECT_GT(behind, 0) << "no neighbour finished before its neighbour's last difference";
}

TEST(CompressedGossip, MalformedOrOutOfOrderDifferencesAreDropped) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  PeerProtocol peer(0, topo.schedule, compressed_config(compression::Kind::kTopK, 0.5, 5),
                    make_params(initial_model()));
  Actions out;
  peer.start(0, out);
  auto difference = [](std::uint32_t length, std::vector<std::uint32_t> indices) {
    auto c = std::make_shared<compression::Compressed>();
    c->kind = compression::Kind::kTopK;
    c->length = length;
    c->values.assign(indices.size(), 0.5f);
    c->indices = std::move(indices);
    return CompressedPart(c);
  };
  peer.handle(0.1, DifferenceArrived{1, 0, difference(kDim + 1, {0})}, out);
  EXPECT_EQ(peer.drops().count(DropCause::kWrongSize), 1);
  peer.handle(0.1, DifferenceArrived{1, 0, difference(kDim, {3, 2})}, out);  // indices out of order
  peer.handle(0.1, DifferenceArrived{7, 1, difference(kDim, {2})}, out);  // a gap: tag 0 is missing
  EXPECT_EQ(peer.drops().count(DropCause::kBadDifference), 2);
  // Peer 7's estimate here has parted from its own for good: it is gone, and said so.
  const auto gone = std::find_if(out.begin(), out.end(), [](const Action& a) {
    return std::holds_alternative<NeighbourGone>(a);
  });
  ASSERT_NE(gone, out.end());
  EXPECT_EQ(std::get<NeighbourGone>(*gone).peer, 7u);
  EXPECT_TRUE(std::get<NeighbourGone>(*gone).lost_difference);
  peer.handle(0.1, DifferenceArrived{1, 0, difference(kDim, {2})}, out);
  peer.handle(0.1, DifferenceArrived{1, 0, difference(kDim, {2})}, out);  // the same tag again
  EXPECT_EQ(peer.drops().count(DropCause::kBadDifference), 3);
  peer.handle(0.1, DifferenceArrived{1, 1, difference(kDim, {2})}, out);
  EXPECT_EQ(peer.dropped_messages(), 4);
}

TEST(CompressedGossip, OptionsItCannotWorkWithAreRefused) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  auto refused = [&](ProtocolConfig config) {
    try {
      PeerProtocol(0, topo.schedule, config, make_params(initial_model()));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  ProtocolConfig c = compressed_config(compression::Kind::kInt8, 0.5, 5);
  c.order = UpdateOrder::kCombineThenAdapt;
  EXPECT_NE(refused(c).find("adapt_then_combine"), std::string::npos) << refused(c);
  c = compressed_config(compression::Kind::kInt8, 0.0, 5);
  EXPECT_NE(refused(c).find("consensus_step"), std::string::npos) << refused(c);
  c = compressed_config(compression::Kind::kInt8, 0.5, 5);
  c.coding.scheme = coding::Scheme::kFrc;
  EXPECT_NE(refused(c).find("coding"), std::string::npos) << refused(c);
  c = compressed_config(compression::Kind::kInt8, 0.5, 5);
  c.push_sum = true;
  EXPECT_NE(refused(c).find("push_sum"), std::string::npos) << refused(c);
  c = compressed_config(compression::Kind::kInt8, 0.5, 5);
  c.policy = {.kind = PolicyKind::kAdPsgd};
  c.order = UpdateOrder::kAdaptThenCombine;
  EXPECT_NE(refused(c).find("ad_psgd"), std::string::npos) << refused(c);
  c = compressed_config(compression::Kind::kInt8, 0.5, 5);
  {
    PeerProtocol peer(0, topo.schedule, c, make_params(initial_model()));
    EXPECT_THROW(peer.resume_at(2), std::invalid_argument);
  }
  {
    PeerProtocol peer(0, topo.schedule, c, make_params(initial_model()));
    Actions out;
    EXPECT_THROW(peer.join(0, out), std::invalid_argument);
  }
}

// Every copy of an estimate must get every difference, and the mix must be symmetric: a
// time-varying schedule, a directed graph and uniform weights on an irregular graph are refused.
TEST(CompressedGossip, GraphsThatPartTheCopiesOrMoveMassAreRefused) {
  const ProtocolConfig c = compressed_config(compression::Kind::kInt8, 0.5, 5);
  const auto refusal = [&](std::shared_ptr<const topology::TopologySchedule> schedule) {
    try {
      PeerProtocol(0, std::move(schedule), c, make_params(initial_model()));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto varying = testing::make_topology(TopologyKind::kOnePeerExponential, 8);
  EXPECT_NE(refusal(varying.schedule).find("static undirected"), std::string::npos);
  const std::vector<topology::Edge> arcs = {{0, 1}, {1, 2}, {2, 0}};
  EXPECT_NE(
      refusal(std::make_shared<topology::DirectedSchedule>(3, arcs)).find("static undirected"),
      std::string::npos);
  topology::TopologySpec star;
  star.kind = TopologyKind::kStar;
  star.peers = 4;
  star.weights = topology::WeightRule::kUniform;  // the hub weighs a leaf 1/4, a leaf it 1/2
  EXPECT_NE(refusal(topology::build_topology(star).schedule).find("symmetric weights"),
            std::string::npos)
      << refusal(topology::build_topology(star).schedule);
  star.weights = topology::WeightRule::kMetropolisHastings;
  EXPECT_EQ(refusal(topology::build_topology(star).schedule), "accepted");
}

namespace error_reset {

// top_k (a quarter of each difference, gamma 0.5) with a reset every `every` gossips by fp16
// and gamma 1; every = 0: none.
ProtocolConfig top_k_config(std::int64_t every, std::int64_t iterations) {
  ProtocolConfig config = compressed_config(compression::Kind::kTopK, 0.5, iterations);
  if (every > 0) config.error_reset = compression::ErrorReset{every, {}, 1.0};
  return config;
}

VirtualNetwork& run(VirtualNetwork& net) {
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  return net;
}

// A reset gossip sends the whole residual (to fp16's rounding) and mixes with gamma 1: after
// it, a model is its public estimate plus the mix of the estimates, which every neighbour's
// copy holds too. Without the reset top_k leaves most of the residual behind.
TEST(CompressedGossipErrorReset, AfterAResetAModelIsItsEstimatePlusTheMix) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.3 * ((i * 7 + k) % 5); };
  // 30 iterations, a reset every 3rd: the last update is a reset's.
  double worst_reset = 0, worst_plain = 0;
  for (std::int64_t every : {3, 0}) {
    LeastSquares model(kDim, 400, 2, 8);
    VirtualNetwork net(testing::make_peers(topo.schedule, top_k_config(every, 30), initial_model()),
                       delays, model);
    run(net);
    double& worst = every > 0 ? worst_reset : worst_plain;
    for (PeerId p = 0; p < 8; ++p) {
      const auto x = net.peer(p).model()->values();
      const auto own = estimate(net.peer(p), p);
      const topology::RoundPeers round = topo.schedule->round(p, 0);
      for (std::size_t c = 0; c < x.size(); ++c) {
        double expected = own[c];
        for (std::size_t r = 0; r < round.receive_from.size(); ++r) {
          expected +=
              round.receive_weights[r] * (estimate(net.peer(p), round.receive_from[r])[c] - own[c]);
        }
        worst = std::max(worst, std::abs(x[c] - expected));
      }
    }
  }
  EXPECT_LT(worst_reset, 1e-3) << "without reset: " << worst_plain;
  EXPECT_GT(worst_plain, 10 * worst_reset);
}

// The reset moves no mass (every peer resets on the same gossip, with the same gamma), and
// brings the peers closer together (measured, ring of 8, 200 iterations, the consensus
// distance: uncompressed 0.030, top_k alone 0.129, with a reset every 4th gossip 0.064).
TEST(CompressedGossipErrorReset, KeepsTheMassAndBringsThePeersTogether) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.3 * ((i * 7 + k) % 5); };
  std::vector<double> distance;
  for (std::int64_t every : {4, 0}) {
    LeastSquares model(kDim, 400, 2, 8);
    SummingGradients gradients(model);
    VirtualNetwork net(
        testing::make_peers(topo.schedule, top_k_config(every, 200), initial_model()), delays,
        gradients);
    run(net);
    const auto sum = sum_of_models(net);
    const auto x0 = initial_model();
    for (std::size_t c = 0; c < sum.size(); ++c) {
      EXPECT_NEAR(sum[c], 8 * x0[c] - kLr * gradients.total()[c], 1e-3) << every << " " << c;
    }
    distance.push_back(consensus_distance(models_of(net)));
  }
  const double plain = consensus_distance(run_ring(std::nullopt, 1.0, 200));
  EXPECT_LT(distance[0], 0.6 * distance[1]) << "uncompressed " << plain;
  EXPECT_GT(distance[0], plain);
}

TEST(CompressedGossipErrorReset, ASparsifierOrAStepOutOfRangeIsRefusedByName) {
  compression::ErrorReset reset;
  reset.spec.kind = compression::Kind::kTopK;
  EXPECT_THROW(compression::check(reset), std::invalid_argument);
  reset.spec.kind = compression::Kind::kQsgd;
  EXPECT_THROW(compression::check(reset), std::invalid_argument);
  reset.spec.kind = compression::Kind::kInt8;
  reset.consensus_step = 0;
  EXPECT_THROW(compression::check(reset), std::invalid_argument);
  reset.consensus_step = 1;
  reset.every = 0;
  EXPECT_THROW(compression::check(reset), std::invalid_argument);
  reset.every = 2;
  EXPECT_NO_THROW(compression::check(reset));
}

}  // namespace error_reset

}  // namespace
}  // namespace fastk::consensus
