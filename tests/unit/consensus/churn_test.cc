// Churn in the simulator's engine (VirtualNetwork::leave_at / rejoin_at, docs/simulation.md
// §9): a peer that leaves says goodbye and its neighbours go on without it; one that comes
// back is a new process that joins from its neighbours' models and runs to the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;

constexpr int kPeers = 6;
constexpr std::int64_t kIterations = 40;

ProtocolConfig full_policy(double silence_timeout_s = 0) {
  ProtocolConfig config;
  config.iterations = kIterations;
  config.policy = {.kind = PolicyKind::kFull};
  config.silence_timeout_s = silence_timeout_s;
  return config;
}

struct ChurnRun {
  std::vector<std::vector<IterationRecord>> records =
      std::vector<std::vector<IterationRecord>>(kPeers);
  int rejoins = 0;
  bool all_finished = false;
  std::vector<std::int64_t> final_iteration;
};

// A ring of 6 under `full` (a gradient takes 1 s, a message 0.1 s); peer 2 leaves at 5.5 s
// and, when `back_at_s` is set, comes back then.
ChurnRun run_with_churn(std::optional<double> back_at_s) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, kPeers);
  LambdaDelays delays;
  LeastSquares model(2, 40, 2, kPeers);
  VirtualNetwork net(testing::make_peers(topo.schedule, full_policy(), {0.5f, -0.5f}), delays,
                     model);
  net.make_peer = [&](PeerId peer) {
    return std::make_unique<PeerProtocol>(peer, topo.schedule, full_policy(3.0),
                                          make_params({0.5f, -0.5f}));
  };
  ChurnRun run;
  net.on_record = [&](const IterationRecord& r) {
    run.records[static_cast<std::size_t>(r.peer)].push_back(r);
  };
  net.start();
  net.leave_at(2, 5.5);
  if (back_at_s) net.rejoin_at(2, *back_at_s);
  net.run();
  run.rejoins = net.rejoins();
  run.all_finished = net.all_finished();
  for (PeerId p = 0; p < kPeers; ++p) run.final_iteration.push_back(net.peer(p).iteration());
  return run;
}

TEST(Churn, APeerThatLeavesIsNotAwaitedAndTheOthersFinish) {
  const ChurnRun run = run_with_churn(std::nullopt);
  EXPECT_TRUE(run.all_finished);
  EXPECT_EQ(run.rejoins, 0);
  for (PeerId p : {0, 1, 3, 4, 5})
    EXPECT_EQ(run.final_iteration[static_cast<std::size_t>(p)], kIterations);
  // Peer 2 ran its first iterations (about 1.1 s each), then none.
  EXPECT_GE(run.records[2].size(), 3u);
  EXPECT_LE(run.records[2].size(), 5u);
  // Its neighbours await only their other neighbour once its goodbye came, and under `full`
  // they would otherwise wait for it for ever.
  for (PeerId p : {1, 3}) {
    const auto& last = run.records[static_cast<std::size_t>(p)].back();
    EXPECT_EQ(last.awaitable, 1) << p;
    EXPECT_EQ(last.used.size(), 1u) << p;
  }
}

TEST(Churn, APeerThatComesBackJoinsFromItsNeighboursAndRunsToTheEnd) {
  const ChurnRun run = run_with_churn(12.0);
  EXPECT_TRUE(run.all_finished);
  EXPECT_EQ(run.rejoins, 1);
  for (PeerId p = 0; p < kPeers; ++p) {
    EXPECT_EQ(run.final_iteration[static_cast<std::size_t>(p)], kIterations) << p;
  }
  const auto& mine = run.records[2];
  const auto back = std::find_if(mine.begin(), mine.end(),
                                 [](const IterationRecord& r) { return r.start_s >= 12.0; });
  ASSERT_NE(back, mine.end());
  // Its first iteration back is at its neighbours' newest tag, past where it left (they went
  // on without it), and it runs every iteration from there.
  EXPECT_GT(back->iteration, std::prev(back)->iteration + 1);
  EXPECT_EQ(mine.end() - back, kIterations - back->iteration);
  // Its neighbours await it again once it is back.
  for (PeerId p : {1, 3}) {
    const auto& theirs = run.records[static_cast<std::size_t>(p)];
    EXPECT_TRUE(std::any_of(theirs.begin(), theirs.end(), [](const IterationRecord& r) {
      return r.start_s > 13.0 && r.awaitable == 2;
    })) << p;
  }
}

// start_at (each peer at its own time, as a replay begins them) at all zeros is start(0).
TEST(Churn, StartAtZeroForEveryPeerIsStart) {
  const auto topo = testing::make_topology(topology::TopologyKind::kRing, kPeers);
  const auto records = [&](bool each) {
    LambdaDelays delays;
    LeastSquares model(2, 40, 2, kPeers);
    VirtualNetwork net(testing::make_peers(topo.schedule, full_policy(), {0.5f, -0.5f}), delays,
                       model);
    std::vector<double> out;  // update times, in event order
    net.on_record = [&](const IterationRecord& r) { out.push_back(r.update_s); };
    if (each) {
      net.start_at(std::vector<double>(kPeers, 0.0));
    } else {
      net.start(0.0);
    }
    net.run();
    std::vector<float> models;
    for (PeerId p = 0; p < kPeers; ++p) {
      const auto x = net.peer(p).model()->values();
      models.insert(models.end(), x.begin(), x.end());
    }
    return std::pair{out, models};
  };
  EXPECT_EQ(records(true), records(false));
}

}  // namespace
}  // namespace fastk::consensus
