// keep_connected (docs/protocol.md §5.8): whatever the policy skips, every iteration's mixes
// carry information from every peer to every other, because every peer awaits (and so mixes)
// its spanning-tree neighbours, and a tree edge is then used in both directions.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "tests/support/toy_runtime.h"
#include "topology/directed.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

// Whether information flows from every peer to every other through the iteration-k mixes: the
// directed graph with an arc j -> i when peer i mixed j's model at iteration k is strongly
// connected, for each k.
std::map<std::int64_t, bool> strongly_connected_per_iteration(
    int peers, const std::vector<IterationRecord>& records) {
  std::map<std::int64_t, std::vector<topology::Edge>> flows;
  for (const auto& r : records) {
    for (PeerId j : r.used) flows[r.iteration].push_back({j, r.peer});
  }
  std::map<std::int64_t, bool> connected;
  for (const auto& [k, arcs] : flows) connected[k] = topology::strongly_connected(peers, arcs);
  return connected;
}

// A random graph, peer 0 ten times slower than the rest, random compute times and links,
// and a policy that would wait for nobody (m_min = 0).
std::vector<IterationRecord> run(topology::TopologySpec spec, PolicySpec policy,
                                 bool keep_connected) {
  const auto topo = topology::build_topology(spec);
  ProtocolConfig config;
  config.iterations = 30;
  config.policy = policy;
  config.m_min = 0;
  config.keep_connected = keep_connected;
  testing::SlowPeerDelays delays(spec.seed);
  delays.link = [](PeerId from, PeerId to, std::int64_t k) {
    return 0.05 * static_cast<double>((from * 7 + to * 3 + k) % 5);
  };
  return testing::run_records(topo.schedule, config, delays);
}

std::vector<topology::TopologySpec> random_graphs() {
  std::vector<topology::TopologySpec> specs;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    topology::TopologySpec er;
    er.kind = TopologyKind::kErdosRenyi;
    er.peers = 20;
    er.probability = 0.25;
    er.seed = seed;
    topology::TopologySpec rr = er;
    rr.kind = TopologyKind::kRandomRegular;
    rr.degree = 4;
    topology::TopologySpec ws = er;
    ws.kind = TopologyKind::kWattsStrogatz;
    specs.insert(specs.end(), {er, rr, ws});
  }
  return specs;
}

TEST(KeepConnected, EveryIterationsUsedEdgesConnectAllPeers) {
  const std::vector<PolicySpec> policies = {{.kind = PolicyKind::kStatic, .backups = 100},
                                            {.kind = PolicyKind::kDeadline},
                                            {.kind = PolicyKind::kAdaptive}};
  for (const auto& spec : random_graphs()) {
    for (const auto& policy : policies) {
      const std::string what = topology::to_string(spec.kind) + " seed " +
                               std::to_string(spec.seed) + " " + to_string(policy.kind);
      const auto records = run(spec, policy, true);
      ASSERT_EQ(records.size(), static_cast<std::size_t>(spec.peers) * 30) << what;
      for (const auto& [k, connected] : strongly_connected_per_iteration(spec.peers, records)) {
        EXPECT_TRUE(connected) << what << ", iteration " << k;
      }
    }
  }
}

// The same runs without it do disconnect: the guarantee is the option's doing.
TEST(KeepConnected, WithoutItTheUsedEdgesFallApart) {
  std::size_t disconnected = 0;
  for (const auto& spec : random_graphs()) {
    const auto records = run(spec, {.kind = PolicyKind::kStatic, .backups = 100}, false);
    for (const auto& [k, connected] : strongly_connected_per_iteration(spec.peers, records)) {
      disconnected += !connected;
    }
  }
  EXPECT_GT(disconnected, 0u);
}

// A static graph only: a schedule whose neighbours change has no tree to keep.
TEST(KeepConnected, IsRefusedOnATimeVaryingSchedule) {
  const auto topo = testing::make_topology(TopologyKind::kOnePeerExponential, 8);
  ProtocolConfig config;
  config.keep_connected = true;
  EXPECT_THROW(PeerProtocol(0, topo.schedule, config, make_params({0.0f})), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::consensus
