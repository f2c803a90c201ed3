// Push-sum (stochastic gradient push, docs/protocol.md §4.4) on the one protocol: on a
// strongly connected directed graph the de-biased models reach the plain mean of the models
// although no row of W sums to 1; the total weight is conserved whatever a backup policy
// skips; on an undirected graph it is D-PSGD.
#include "consensus/variants/push_sum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "tests/support/toy_runtime.h"
#include "topology/directed.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;

constexpr int kPeers = 20;

// A directed ring (so strongly connected) and 30 more random arcs.
std::shared_ptr<const topology::DirectedSchedule> random_directed(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> peer(0, kPeers - 1);
  std::set<std::pair<int, int>> arcs;
  for (int i = 0; i < kPeers; ++i) arcs.insert({i, (i + 1) % kPeers});
  while (arcs.size() < kPeers + 30) {
    const int a = peer(rng), b = peer(rng);
    if (a != b) arcs.insert({a, b});
  }
  std::vector<topology::Edge> list;
  for (const auto& [a, b] : arcs) list.push_back({a, b});
  return std::make_shared<topology::DirectedSchedule>(kPeers, list);
}

// Peer i starts from (i, -2i, i^2 / 10): different models, whose mean the peers must find.
std::vector<float> initial(int i) {
  return {static_cast<float>(i), static_cast<float>(-2 * i), static_cast<float>(i * i) / 10};
}

struct Outcome {
  std::vector<std::vector<float>> debiased;
  double total_weight = 0;  // own weights and weight not yet added
  int peers_with_weight_off_one = 0;
  std::vector<double> mean_numerator;  // sum of x_i / n: what the de-biased models track
  int late_masses = 0;                 // messages added at a later iteration than their tag's
  double min_weight = 1e300;
};

Outcome run(const std::shared_ptr<const topology::TopologySchedule>& schedule,
            ProtocolConfig config, DelaySource& delays, bool push_sum = true) {
  config.push_sum = push_sum;
  std::vector<std::unique_ptr<PeerProtocol>> peers;
  for (int i = 0; i < schedule->size(); ++i) {
    peers.push_back(std::make_unique<PeerProtocol>(i, schedule, config, make_params(initial(i))));
  }
  LeastSquares model(3, 60, 2, schedule->size());
  VirtualNetwork net(std::move(peers), delays, model);
  Outcome r;
  net.on_record = [&](const IterationRecord& record) {
    for (auto tag : record.used_tags) r.late_masses += tag < record.iteration;
  };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  net.run_until(1e12);  // the messages still in flight: their mass counts too
  std::vector<double> numerators(3, 0.0);
  for (int i = 0; i < schedule->size(); ++i) {
    for (int c = 0; c < 3; ++c) numerators[c] += net.peer(i).model()->values()[c];
  }
  for (int c = 0; c < 3; ++c) r.mean_numerator.push_back(numerators[c] / schedule->size());
  for (int i = 0; i < schedule->size(); ++i) {
    const Params z = net.peer(i).debiased_model();  // a fresh buffer: keep it while read
    r.debiased.emplace_back(z->values().begin(), z->values().end());
    // A peer without push-sum holds weight 1 and nothing pending.
    const auto* mass = dynamic_cast<const PushSum*>(&net.peer(i).variant());
    const double weight = mass ? mass->weight() : 1.0;
    r.total_weight += weight + (mass ? mass->pending_weight() : 0.0);
    if (std::abs(weight - 1.0) > 1e-3) ++r.peers_with_weight_off_one;
    r.min_weight = std::min(r.min_weight, weight);
  }
  return r;
}

std::vector<double> mean_of_initial_models(int peers) {
  std::vector<double> mean(3, 0.0);
  for (int i = 0; i < peers; ++i) {
    for (int c = 0; c < 3; ++c) mean[c] += initial(i)[static_cast<std::size_t>(c)] / peers;
  }
  return mean;
}

TEST(PushSum, DebiasedModelsReachThePlainMeanOnADirectedGraph) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    ProtocolConfig config;
    config.iterations = 400;
    config.optimizer.lr = 0;  // pure gossip: the mean must come out, not a weighted one
    LambdaDelays delays;
    const Outcome r = run(random_directed(seed), config, delays);
    const auto mean = mean_of_initial_models(kPeers);
    for (int i = 0; i < kPeers; ++i) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(r.debiased[static_cast<std::size_t>(i)][static_cast<std::size_t>(c)],
                    mean[static_cast<std::size_t>(c)], 1e-3)
            << "seed " << seed << ", peer " << i << ", value " << c;
      }
    }
    // The weights themselves did not average to 1 everywhere: the de-biasing did the work.
    EXPECT_GT(r.peers_with_weight_off_one, 0) << "seed " << seed;
    EXPECT_NEAR(r.total_weight, kPeers, 1e-3);
  }
}

// Training on the directed graph (the defining property of push-sum): the mean of the
// de-biased models tracks the mean of the numerators x_i, which is where plain SGD on the
// average would be, and every de-biased model stays near it (up to O(lr), as for D-PSGD).
TEST(PushSum, DebiasedModelsTrackTheMeanOfTheModelsWhileTraining) {
  ProtocolConfig config;
  config.iterations = 300;
  config.optimizer.lr = 0.05;
  LambdaDelays delays;
  const Outcome r = run(random_directed(7), config, delays);
  for (int c = 0; c < 3; ++c) {
    double mean = 0;
    for (const auto& z : r.debiased) mean += z[static_cast<std::size_t>(c)] / kPeers;
    EXPECT_NEAR(mean, r.mean_numerator[static_cast<std::size_t>(c)], 0.01) << "value " << c;
    for (int i = 0; i < kPeers; ++i) {
      EXPECT_NEAR(r.debiased[static_cast<std::size_t>(i)][static_cast<std::size_t>(c)],
                  r.mean_numerator[static_cast<std::size_t>(c)], 0.2)
          << "peer " << i;
    }
  }
}

// A 10x slower peer under backup policies with m_min = 0. `iterations`: 60 keeps every
// weight far from underflow; with 400 the slow peer goes on alone for hundreds of iterations
// after its neighbours finished, giving its shares to peers that no longer mix.
Outcome run_with_slow_peer(PolicyKind kind, std::int64_t iterations) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = 0.05;
  config.m_min = 0;
  config.policy = {.kind = kind, .backups = 100};
  testing::SlowPeerDelays delays(3);
  return run(random_directed(11), config, delays);
}

// Backup policies skip late neighbours, but a late message's mass is added when it comes:
// the weight of all peers, with what is received and not yet added, stays the number of peers.
// (adaptive waits for everyone without gradient statistics, which the toy model lacks)
TEST(PushSum, WeightIsConservedUnderBackupPolicies) {
  for (const auto kind : {PolicyKind::kStatic, PolicyKind::kDeadline}) {
    const Outcome r = run_with_slow_peer(kind, 60);
    EXPECT_NEAR(r.total_weight, kPeers, 1e-3) << to_string(kind);
    EXPECT_GT(r.late_masses, 0) << to_string(kind);  // the policy did skip, and caught up
  }
}

// A neighbour far ahead gives its mass at once, not when this peer reaches its tags, and a
// peer left alone keeps its weight normal: no weight reaches 0 (x / w would be NaN, and the
// run would end with "training diverged"), and the de-biased models stay bounded.
TEST(PushSum, APeerFarBehindOrAloneKeepsAUsableWeight) {
  for (const auto kind : {PolicyKind::kStatic, PolicyKind::kDeadline}) {
    const Outcome r = run_with_slow_peer(kind, 400);
    EXPECT_GT(r.min_weight, 0.0) << to_string(kind);
    for (const auto& z : r.debiased) {
      for (float v : z) EXPECT_LT(std::abs(v), 10.0f) << to_string(kind);
    }
  }
}

// On an undirected graph with doubly stochastic weights every weight stays 1, and push-sum is
// plain D-PSGD.
TEST(PushSum, OnAnUndirectedGraphItIsDpsgd) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, 8);
  ProtocolConfig config;
  config.iterations = 50;
  config.optimizer.lr = 0.05;
  LambdaDelays delays;
  const Outcome push = run(topo.schedule, config, delays, true);
  const Outcome plain = run(topo.schedule, config, delays, false);
  EXPECT_EQ(push.peers_with_weight_off_one, 0);
  for (int i = 0; i < 8; ++i) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(push.debiased[static_cast<std::size_t>(i)][static_cast<std::size_t>(c)],
                  plain.debiased[static_cast<std::size_t>(i)][static_cast<std::size_t>(c)], 1e-4);
    }
  }
}

// Weights that are not column-stochastic would not keep the mean: refused, naming the peer.
TEST(PushSum, NeedsColumnStochasticWeights) {
  topology::TopologySpec spec;
  spec.kind = topology::TopologyKind::kStar;
  spec.peers = 4;
  spec.weights = topology::WeightRule::kUniform;  // rows sum to 1, the hub's column does not
  const auto star = topology::build_topology(spec);
  ProtocolConfig config;
  config.push_sum = true;
  try {
    PeerProtocol(0, star.schedule, config, make_params({0.0f}));
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("peer 0's column of W sums to"), std::string::npos)
        << e.what();
  }
}

TEST(PushSum, IsRefusedOnATimeVaryingScheduleAndCannotComeBack) {
  const auto varying = testing::make_topology(topology::TopologyKind::kOnePeerExponential, 8);
  ProtocolConfig config;
  config.push_sum = true;
  EXPECT_THROW(PeerProtocol(0, varying.schedule, config, make_params({0.0f})),
               std::invalid_argument);
  PeerProtocol peer(0, random_directed(1), config, make_params({0.0f}));
  EXPECT_THROW(peer.resume_at(3), std::invalid_argument);
  EXPECT_EQ(peer.model()->values().size(), 2u);  // the model and its weight
  EXPECT_EQ(peer.debiased_model()->values().size(), 1u);
}

}  // namespace
}  // namespace fastk::consensus
