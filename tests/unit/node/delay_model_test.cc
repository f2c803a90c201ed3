#include "node/stragglers/delay_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fastk::node::stragglers {
namespace {

double mean_compute(DelayModel& model, int peer, int n) {
  double sum = 0;
  for (int k = 0; k < n; ++k) sum += model.compute_time_s(peer, k);
  return sum / n;
}

TEST(DelayModel, NoneIsTheConstantBaseTime) {
  DelayModel model({.compute_s = 2.0}, 4);
  EXPECT_DOUBLE_EQ(model.compute_time_s(3, 17), 2.0);
  EXPECT_DOUBLE_EQ(model.link_delay_s(0, 1, 5), 0.0);  // nothing added to the link's own
  EXPECT_FALSE(model.delays_links());
  EXPECT_DOUBLE_EQ(model.injected_sleep_s(3, 17, 0.5), 0.0);
}

TEST(DelayModel, ShiftedExponentialAndParetoHaveTheirMeans) {
  DelayModel sexp({.distribution = ComputeDistribution::kShiftedExponential}, 2);
  EXPECT_NEAR(mean_compute(sexp, 0, 20000), 2.0, 0.05);
  DelayModel pareto({.distribution = ComputeDistribution::kPareto, .pareto_alpha = 3.0}, 2);
  EXPECT_NEAR(mean_compute(pareto, 1, 20000), 1.5, 0.05);
  for (int k = 0; k < 1000; ++k) EXPECT_GE(pareto.compute_time_s(0, k), 1.0);
}

TEST(DelayModel, BimodalTransientStragglersHitWithTheirProbability) {
  DelayModel model({.transient_probability = 0.1, .transient_factor = 10}, 1);
  int slow = 0;
  for (int k = 0; k < 10000; ++k) {
    const double t = model.compute_time_s(0, k);
    EXPECT_TRUE(t == 1.0 || t == 10.0) << t;
    slow += t == 10.0 ? 1 : 0;
  }
  EXPECT_NEAR(slow / 10000.0, 0.1, 0.01);
}

TEST(DelayModel, DrawsArePureFunctionsOfSeedPeerAndIteration) {
  const DelaySpec spec{.distribution = ComputeDistribution::kShiftedExponential,
                       .transient_probability = 0.3,
                       .link_jitter_s = 0.2,
                       .seed = 42};
  DelayModel a(spec, 8), b(spec, 8);
  std::vector<double> forward, backward(8);
  for (int p = 0; p < 8; ++p) forward.push_back(a.compute_time_s(p, 5));
  for (int p = 7; p >= 0; --p) backward[static_cast<std::size_t>(p)] = b.compute_time_s(p, 5);
  EXPECT_EQ(forward, backward);
  EXPECT_NE(forward[0], forward[1]) << "peers have independent streams";
  EXPECT_EQ(a.link_delay_s(2, 3, 7), b.link_delay_s(2, 3, 7));
  DelaySpec other = spec;
  other.seed = 43;
  EXPECT_NE(DelayModel(other, 8).compute_time_s(0, 5), forward[0]);
}

TEST(DelayModel, PersistentSlowPeersAndScheduledWindows) {
  DelayModel model(
      {.slow_peers = {{2, 5.0}},
       .windows = {{.peers = {1}, .from_iteration = 10, .to_iteration = 20, .factor = 3.0}}},
      4);
  EXPECT_DOUBLE_EQ(model.compute_time_s(2, 0), 5.0);
  EXPECT_DOUBLE_EQ(model.compute_time_s(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(model.compute_time_s(1, 9), 1.0);
  EXPECT_DOUBLE_EQ(model.compute_time_s(1, 10), 3.0);
  EXPECT_DOUBLE_EQ(model.compute_time_s(1, 19), 3.0);
  EXPECT_DOUBLE_EQ(model.compute_time_s(1, 20), 1.0);
}

TEST(DelayModel, GilbertElliottSpellsAreLongAndHaveTheStationaryShare) {
  DelayModel model({.markov_good_to_bad = 0.05, .markov_bad_to_good = 0.2, .markov_factor = 10}, 1);
  int bad = 0, switches = 0;
  bool previous = false;
  const int n = 40000;
  for (int k = 0; k < n; ++k) {
    const bool now = model.compute_time_s(0, k) == 10.0;
    bad += now ? 1 : 0;
    switches += now != previous ? 1 : 0;
    previous = now;
  }
  EXPECT_NEAR(bad / static_cast<double>(n), 0.05 / 0.25, 0.02);  // stationary share 0.2
  // Independent draws with p = 0.2 would switch 2 p (1 - p) n = 0.32 n times.
  EXPECT_LT(switches, 0.1 * n);
}

// GC-DC's heterogeneous workers: peers of a class follow its chain, the others the table's.
TEST(DelayModel, MarkovClassesGiveTheirPeersTheirOwnChain) {
  DelayModel model(
      {.markov_good_to_bad = 0.02,
       .markov_bad_to_good = 0.5,
       .markov_factor = 10,
       .markov_classes = {{.peers = {1}, .good_to_bad = 0.3, .bad_to_good = 0.2, .factor = 4}}},
      2);
  int reliable_bad = 0, unreliable_bad = 0, unreliable_other = 0;
  const int n = 40000;
  for (int k = 0; k < n; ++k) {
    reliable_bad += model.compute_time_s(0, k) == 10.0 ? 1 : 0;
    const double t = model.compute_time_s(1, k);
    unreliable_bad += t == 4.0 ? 1 : 0;
    unreliable_other += t != 4.0 && t != 1.0 ? 1 : 0;
  }
  EXPECT_NEAR(reliable_bad / static_cast<double>(n), 0.02 / 0.52, 0.01);
  EXPECT_NEAR(unreliable_bad / static_cast<double>(n), 0.3 / 0.5, 0.02);
  EXPECT_EQ(unreliable_other, 0);  // the class's factor, never the table's
}

TEST(DelayModel, MarkovClassesAreChecked) {
  const auto message = [](std::vector<MarkovClass> classes) -> std::string {
    try {
      DelayModel({.markov_classes = std::move(classes)}, 4);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_THAT(message({{.peers = {4}, .good_to_bad = 0.1}}),
              ::testing::HasSubstr("markov_classes.peers: peer 4 is not in [0, 4)"));
  EXPECT_THAT(message({{.peers = {1}, .good_to_bad = 0.1}, {.peers = {1}, .good_to_bad = 0.2}}),
              ::testing::HasSubstr("peer 1 is in more than one class"));
  EXPECT_THAT(message({{.peers = {}, .good_to_bad = 0.1}}), ::testing::HasSubstr("needs peers"));
  EXPECT_THAT(message({{.peers = {0}, .good_to_bad = 1.5}}),
              ::testing::HasSubstr("markov_classes.good_to_bad"));
  EXPECT_EQ(message({{.peers = {0, 3}, .good_to_bad = 0.1}}), "");
}

TEST(DelayModel, LinkJitterAndOverrides) {
  DelayModel model(
      {.link_s = 0.1,
       .link_jitter_s = 0.05,
       .links = {{.from = 0, .to = 1, .delay_s = 2.0}, {.from = 1, .to = 0, .factor = 10}}},
      2);
  double sum = 0;
  for (int k = 0; k < 20000; ++k) {
    const double d = model.link_delay_s(1, 1, k);
    EXPECT_GE(d, 0.1);
    sum += d;
  }
  EXPECT_NEAR(sum / 20000, 0.15, 0.005);
  EXPECT_DOUBLE_EQ(model.link_delay_s(0, 1, 3), 2.0);
  EXPECT_GE(model.link_delay_s(1, 0, 3), 1.0);
}

TEST(DelayModel, RejectsPeersOutsideTheNetwork) {
  EXPECT_THROW(DelayModel({.slow_peers = {{9, 2.0}}}, 4), std::invalid_argument);
  EXPECT_THROW(DelayModel({.transient_probability = 1.5}, 4), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::node::stragglers
