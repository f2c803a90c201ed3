// The simulated machine (simulation/machine_costs.h): peers that share cores take turns, an
// injected straggle sleeps without using a core, and the I/O thread's work delays what it
// sends. Hand-checkable timelines on two peers joined by one edge.
#include "simulation/machine_costs.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;

// Update times by (peer, iteration) of a two-peer path run with these settings.
std::map<std::pair<PeerId, std::int64_t>, double> update_times(const ProtocolConfig& config,
                                                               LambdaDelays& delays,
                                                               MachineCosts costs) {
  const auto topo = testing::make_topology(topology::TopologyKind::kPath, 2);
  LeastSquares model(2, 20, 1, 2);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, {0.5f, -0.5f}), delays, model,
                     std::move(costs));
  std::map<std::pair<PeerId, std::int64_t>, double> at;
  net.on_record = [&](const IterationRecord& r) { at[{r.peer, r.iteration}] = r.update_s; };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  return at;
}

MachineCosts one_shared_core() {
  MachineCosts costs;
  costs.gradient_cpu_s = 1.0;
  costs.cpu_group = {0, 0};
  costs.group_cores = {1.0};
  return costs;
}

TEST(MachineCostsTest, PeersOnOneCoreComputeAtHalfSpeed) {
  ProtocolConfig config;
  config.iterations = 5;
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 1.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  const auto alone = update_times(config, delays, {});
  const auto shared = update_times(config, delays, one_shared_core());
  EXPECT_DOUBLE_EQ(alone.at({0, 4}), 5.0);
  EXPECT_DOUBLE_EQ(shared.at({0, 4}), 10.0);
  EXPECT_DOUBLE_EQ(shared.at({1, 4}), 10.0);
}

TEST(MachineCostsTest, AnInjectedStraggleSleepsWithoutTheCore) {
  // Peer 0 is 5x slow: 1 s of CPU, then 4 s asleep. Peer 1 never waits (m = 0), so while
  // peer 0 sleeps it has the core to itself: one iteration per second.
  ProtocolConfig config;
  config.iterations = 5;
  config.m_min = 0;
  config.policy.kind = PolicyKind::kStatic;
  config.policy.backups = 1;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 0 ? 5.0 : 1.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  const auto at = update_times(config, delays, one_shared_core());
  EXPECT_DOUBLE_EQ(at.at({1, 0}), 2.0);  // both compute at half speed first
  EXPECT_DOUBLE_EQ(at.at({1, 4}), 6.0);  // then 2, 3, 4, 5, 6: alone
  EXPECT_DOUBLE_EQ(at.at({0, 0}), 6.0);  // 2 s of shared CPU, then 4 s asleep
}

TEST(MachineCostsTest, ASpeedUpBelowTheMeasuredGradientDoesNotMakeTheCpuFaster) {
  // A slowdown factor of 0.5 asks for half a gradient's time; a real peer still computes the
  // whole gradient (1 s of CPU) and sleeps nothing, and so does the simulated one.
  ProtocolConfig config;
  config.iterations = 3;
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 0.5; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  MachineCosts own_cores;
  own_cores.gradient_cpu_s = 1.0;
  const auto at = update_times(config, delays, own_cores);
  EXPECT_DOUBLE_EQ(at.at({0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(at.at({0, 2}), 3.0);
  // Without a measured machine the delay model's time is all there is.
  EXPECT_DOUBLE_EQ(update_times(config, delays, {}).at({0, 2}), 1.5);
}

TEST(MachineCostsTest, ASlowdownSleepsItsShareOfThePlainGradientWhateverThePolicyComputes) {
  // The adaptive policy asks for statistics on every second gradient, which then costs 1.2 s
  // of CPU instead of the plain 1 s; a 5x slowdown adds 4 plain gradients of sleep either
  // way, as a real peer's does: 5.2 s for iteration 0, 5.0 s for iteration 1.
  ProtocolConfig config;
  config.iterations = 2;
  config.policy.kind = PolicyKind::kAdaptive;
  config.policy.gradient_stats_every = 2;
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 5.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  MachineCosts costs;
  costs.gradient_cpu_s = 1.0;
  costs.gradient_stats_cpu_s = 1.2;
  const auto at = update_times(config, delays, costs);
  EXPECT_DOUBLE_EQ(at.at({0, 0}), 5.2);
  EXPECT_DOUBLE_EQ(at.at({0, 1}), 10.2);
}

TEST(MachineCostsTest, TheIoThreadsWorkDelaysWhatItSends) {
  // Each update costs 0.3 + 0.05 per model mixed, each send 0.2, each receive 0.1, on cores
  // of their own: a peer's next iteration starts 0.55 s after its update.
  ProtocolConfig config;
  config.iterations = 4;
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 1.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  MachineCosts costs;
  costs.receive_s = 0.1;
  costs.send_s = 0.2;
  costs.update_s = 0.3;
  costs.update_per_term_s = 0.05;
  const auto at = update_times(config, delays, costs);
  EXPECT_DOUBLE_EQ(at.at({0, 0}), 1.0);
  EXPECT_NEAR(at.at({0, 3}), 1.0 + 3 * 1.55, 1e-12);
  EXPECT_NEAR(at.at({1, 3}), 1.0 + 3 * 1.55, 1e-12);
}

// The backup policy's decision (decision_s) is charged once per gossip, on the update that
// ends it, and not on the local steps of [consensus] local_steps, which decide nothing.
// H = 2: iterations 0 and 2 are local (update 0.3 s), 1 and 3 gossip (0.3 + 0.5 s).
TEST(MachineCostsTest, TheDecisionIsChargedPerGossipNotPerLocalStep) {
  ProtocolConfig config;
  config.iterations = 4;
  config.local_steps = 2;
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 1.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  MachineCosts costs;
  costs.update_s = 0.3;
  costs.decision_s = 0.5;
  const auto at = update_times(config, delays, costs);
  EXPECT_NEAR(at.at({0, 1}), 1.0 + 1.3, 1e-12);
  EXPECT_NEAR(at.at({0, 2}), 2.3 + 1.8, 1e-12);
  EXPECT_NEAR(at.at({0, 3}), 4.1 + 1.3, 1e-12);
}

// Compressed gossip pays its own work on the I/O thread: compressing its difference before
// sending, and applying the neighbour's on receipt. Adapt-then-combine on two peers: a period
// is the gradient (1), compress and send (c + 0.2), receive and apply (0.1 + a), and the update
// of two estimate terms (0.3 + 2 x 0.05): 1.7 s, plus c + a.
TEST(MachineCostsTest, CompressedGossipIsChargedItsCompressionAndItsApplying) {
  ProtocolConfig config;
  config.iterations = 4;
  config.order = UpdateOrder::kAdaptThenCombine;
  config.compression = compression::CompressorSpec{.kind = compression::Kind::kInt8};
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 1.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  MachineCosts costs;
  costs.receive_s = 0.1;
  costs.send_s = 0.2;
  costs.update_s = 0.3;
  costs.update_per_term_s = 0.05;
  const auto plain = update_times(config, delays, costs);
  costs.compress_s = 0.25;
  costs.apply_difference_s = 0.15;
  const auto charged = update_times(config, delays, costs);
  for (PeerId p : {0, 1}) {
    EXPECT_NEAR(plain.at({p, 3}) - plain.at({p, 0}), 3 * 1.7, 1e-9) << p;
    EXPECT_NEAR(charged.at({p, 3}) - charged.at({p, 0}), 3 * (1.7 + 0.4), 1e-9) << p;
  }
}

TEST(MachineCostsTest, APeerOnASlowerHostTakesItsHostsTimeForEveryGradient) {
  // Peer 1's host computes a gradient in twice the calibrated time (gradient_scale, from
  // `fastk doctor --hosts-json`); each peer has a core of its own: 2 s per gradient for peer
  // 1, and peer 0, which needs its models, is held back too.
  ProtocolConfig config;
  config.iterations = 5;
  LambdaDelays delays;
  delays.compute = [](PeerId, std::int64_t) { return 1.0; };
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  MachineCosts alike;
  alike.gradient_cpu_s = 1.0;
  alike.cpu_group = {0, 1};
  alike.group_cores = {1.0, 1.0};
  MachineCosts mixed = alike;
  mixed.gradient_scale = {1.0, 2.0};
  const auto same = update_times(config, delays, alike);
  const auto slow = update_times(config, delays, mixed);
  EXPECT_DOUBLE_EQ(same.at({1, 4}), 5.0);
  EXPECT_DOUBLE_EQ(slow.at({1, 4}), 10.0);
  EXPECT_DOUBLE_EQ(same.at({0, 4}), 5.0);
  EXPECT_GT(slow.at({0, 4}), 7.0);
  // Slowed down 2x: a real peer sleeps the calibrated gradient's time once more (delay_model.h,
  // injected_sleep_s) beside its host's CPU work: 2 + 1 s per gradient on peer 1's host.
  LambdaDelays slowed = delays;
  slowed.compute = [](PeerId, std::int64_t) { return 2.0; };
  EXPECT_DOUBLE_EQ(update_times(config, slowed, mixed).at({1, 4}), 15.0);
  EXPECT_DOUBLE_EQ(update_times(config, slowed, alike).at({1, 4}), 10.0);
}

TEST(MachineCostsTest, CostsThatDoNotFitThePeersAreRejected) {
  const auto topo = testing::make_topology(topology::TopologyKind::kPath, 2);
  LambdaDelays delays;
  LeastSquares model(2, 20, 1, 2);
  MachineCosts wrong_count;
  wrong_count.cpu_group = {0};
  wrong_count.group_cores = {1.0};
  EXPECT_THROW(VirtualNetwork(testing::make_peers(topo.schedule, {}, {0.5f, -0.5f}), delays, model,
                              wrong_count),
               std::invalid_argument);
  MachineCosts no_group;
  no_group.cpu_group = {0, 1};
  no_group.group_cores = {1.0};
  EXPECT_THROW(VirtualNetwork(testing::make_peers(topo.schedule, {}, {0.5f, -0.5f}), delays, model,
                              no_group),
               std::invalid_argument);
  MachineCosts negative;
  negative.send_s = -1;
  EXPECT_THROW(VirtualNetwork(testing::make_peers(topo.schedule, {}, {0.5f, -0.5f}), delays, model,
                              negative),
               std::invalid_argument);
}

}  // namespace
}  // namespace fastk::consensus
