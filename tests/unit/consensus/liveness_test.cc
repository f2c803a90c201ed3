// Liveness (docs/protocol.md, experiment E7; the argument is §6.1): no deadlock for any
// delays, including a peer 1000x slower than the rest; the optional gap bound (§6.3);
// time-varying topologies on the same machine.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

struct Outcome {
  bool finished = false;
  double slowest_finish_s = 0;  // of peer 0 (the slow one)
  double fast_finish_s = 0;     // latest finish among the others
  std::int64_t max_edge_gap = 0;
};

Outcome run_with_slow_peer(PolicySpec policy, int max_gap = 0) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  ProtocolConfig config;
  config.iterations = 12;
  config.policy = policy;
  config.max_gap = max_gap;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 0 ? 1000.0 : 1.0; };
  LeastSquares model(2, 40, 2, 16);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, {0.5f, -0.5f}), delays, model);
  Outcome outcome;
  net.on_record = [&](const IterationRecord& r) {
    if (r.iteration + 1 == 12) {
      (r.peer == 0 ? outcome.slowest_finish_s : outcome.fast_finish_s) =
          std::max(r.peer == 0 ? outcome.slowest_finish_s : outcome.fast_finish_s, r.update_s);
    }
    for (const auto& e : topo.graph.edges()) {
      const std::int64_t gap = std::llabs(net.peer(e.a).iteration() - net.peer(e.b).iteration());
      outcome.max_edge_gap = std::max(outcome.max_edge_gap, gap);
    }
  };
  net.start();
  net.run();
  outcome.finished = net.all_finished();
  return outcome;
}

TEST(Liveness, EveryPolicyFinishesWithAPeerAThousandTimesSlower) {
  for (auto kind :
       {PolicyKind::kFull, PolicyKind::kStatic, PolicyKind::kDeadline, PolicyKind::kAdaptive}) {
    const Outcome o = run_with_slow_peer({.kind = kind, .backups = 1});
    EXPECT_TRUE(o.finished) << to_string(kind);
    EXPECT_GE(o.slowest_finish_s, 12 * 1000.0) << to_string(kind);
  }
}

TEST(Liveness, BackupWorkersLetTheFastPeersRunAhead) {
  const Outcome full = run_with_slow_peer({.kind = PolicyKind::kFull});
  const Outcome skip = run_with_slow_peer({.kind = PolicyKind::kStatic, .backups = 1});
  // With everyone waiting the slow peer paces the whole network.
  EXPECT_GT(full.fast_finish_s, 10 * 1000.0);
  EXPECT_LT(skip.fast_finish_s, 100.0);
  EXPECT_GT(skip.max_edge_gap, 3);
}

TEST(Liveness, GapBoundHoldsOnEveryEdge) {
  const Outcome o = run_with_slow_peer({.kind = PolicyKind::kStatic, .backups = 1}, 2);
  EXPECT_TRUE(o.finished);
  EXPECT_LE(o.max_edge_gap, 3);
}

TEST(Liveness, RemovedPeerStopsBeingAwaited) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 6);
  ProtocolConfig config;
  config.iterations = 10;
  LambdaDelays delays;
  LeastSquares model(2, 40, 2, 6);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, {0.5f, -0.5f}), delays, model);
  net.start();
  net.run_until(3.5);
  net.remove_peer(2, 3.5);
  net.run();
  for (PeerId i = 0; i < 6; ++i) {
    if (i != 2) {
      EXPECT_TRUE(net.peer(i).finished()) << i;
    }
  }
  EXPECT_LT(net.peer(2).iteration(), 10);
}

TEST(Liveness, TimeVaryingOnePeerScheduleAveragesExactlyOverAPeriod) {
  topology::TopologySpec spec;
  spec.kind = TopologyKind::kOnePeerExponential;
  spec.peers = 8;
  const auto topo = topology::build_topology(spec);
  ProtocolConfig config;
  config.iterations = 3;  // the period for 8 peers
  config.optimizer.lr = 0;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + ((3 * i + k) % 4); };
  LeastSquares model(1, 10, 1, 8);
  std::vector<std::unique_ptr<PeerProtocol>> peers;
  for (PeerId i = 0; i < 8; ++i) {
    peers.push_back(std::make_unique<PeerProtocol>(i, topo.schedule, config,
                                                   make_params({static_cast<float>(i)})));
  }
  VirtualNetwork net(std::move(peers), delays, model);
  net.start();
  net.run();
  ASSERT_TRUE(net.all_finished());
  for (PeerId i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(net.peer(i).model()->values()[0], 3.5f) << i;
}

}  // namespace
}  // namespace fastk::consensus
