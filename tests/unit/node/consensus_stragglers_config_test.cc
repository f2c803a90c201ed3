// The [consensus] and [stragglers] tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"
#include "tests/support/config_parsing.h"

namespace fastk::node {
namespace {

using ::testing::HasSubstr;

using testing::error_of;
using testing::parse;

TEST(ConsensusTable, DefaultsAreFullPolicyCombineThenAdaptReturnToSelf) {
  const ExperimentConfig c = parse("");
  EXPECT_EQ(c.consensus.protocol.policy.kind, consensus::PolicyKind::kFull);
  EXPECT_EQ(c.consensus.protocol.order, consensus::UpdateOrder::kCombineThenAdapt);
  EXPECT_EQ(c.consensus.protocol.renormalisation, consensus::Renormalisation::kReturnToSelf);
  EXPECT_EQ(c.consensus.protocol.m_min, 1);
  EXPECT_EQ(c.consensus.micro_batches, 4);
  EXPECT_EQ(c.stragglers.distribution, stragglers::ComputeDistribution::kNone);
  EXPECT_DOUBLE_EQ(c.stragglers.link_s, 0.1);
}

TEST(ConsensusTable, ReadsEveryKey) {
  const ExperimentConfig c = parse(R"(
[consensus]
policy = "adaptive"
backups = 2
slack = 0.25
window = 10
gradient_window = 3
warmup = 1
smoothness = 2.5
disagreement_ema = 0.9
m_min = 2
order = "adapt_then_combine"
renormalisation = "proportional"
staleness = 1
max_gap = 3
silence_timeout_s = 30
micro_batches = 8
)");
  const auto& p = c.consensus.protocol;
  EXPECT_EQ(p.policy.kind, consensus::PolicyKind::kAdaptive);
  EXPECT_EQ(p.policy.backups, 2);
  EXPECT_DOUBLE_EQ(p.policy.slack, 0.25);
  EXPECT_EQ(p.policy.window, 10);
  EXPECT_EQ(p.policy.gradient_window, 3);
  EXPECT_EQ(p.policy.warmup, 1);
  EXPECT_DOUBLE_EQ(p.policy.smoothness, 2.5);
  EXPECT_DOUBLE_EQ(p.policy.disagreement_ema, 0.9);
  EXPECT_EQ(p.m_min, 2);
  EXPECT_EQ(p.order, consensus::UpdateOrder::kAdaptThenCombine);
  EXPECT_EQ(p.renormalisation, consensus::Renormalisation::kProportional);
  EXPECT_EQ(p.staleness, 1);
  EXPECT_EQ(p.max_gap, 3);
  EXPECT_DOUBLE_EQ(p.silence_timeout_s, 30);
  EXPECT_EQ(c.consensus.micro_batches, 8);
}

TEST(ConsensusTable, BadValuesNameTheirPath) {
  const std::string e = error_of(R"(
[consensus]
policy = "fastest"
backups = -1
polcy = "full"
)");
  EXPECT_THAT(e, HasSubstr("consensus.policy"));
  EXPECT_THAT(e, HasSubstr("consensus.backups"));
  EXPECT_THAT(e, HasSubstr("consensus.polcy"));
}

TEST(StragglersTable, ReadsDistributionsSlowPeersWindowsAndLinks) {
  const ExperimentConfig c = parse(R"(
[run]
seed = 9
[stragglers]
compute_s = 0.5
distribution = "pareto"
pareto_alpha = 2.0
transient_probability = 0.1
transient_factor = 10
slow_peers = [1, 4]
slow_factors = [5, 3.5]
markov_good_to_bad = 0.05
markov_bad_to_good = 0.2
markov_factor = 8
link_s = 0.2
link_jitter_s = 0.05
[[stragglers.windows]]
peers = [2]
from_iteration = 10
to_iteration = 20
probability = 0.5
factor = 4
[[stragglers.links]]
from = 0
to = 1
factor = 10
)");
  const auto& s = c.stragglers;
  EXPECT_EQ(s.seed, 9u);
  EXPECT_DOUBLE_EQ(s.compute_s, 0.5);
  EXPECT_EQ(s.distribution, stragglers::ComputeDistribution::kPareto);
  EXPECT_DOUBLE_EQ(s.pareto_alpha, 2.0);
  ASSERT_EQ(s.slow_peers.size(), 2u);
  EXPECT_EQ(s.slow_peers[1].peer, 4);
  EXPECT_DOUBLE_EQ(s.slow_peers[1].factor, 3.5);
  EXPECT_DOUBLE_EQ(s.markov_factor, 8);
  ASSERT_EQ(s.windows.size(), 1u);
  EXPECT_EQ(s.windows[0].peers, std::vector<int>{2});
  EXPECT_EQ(s.windows[0].to_iteration, 20);
  EXPECT_DOUBLE_EQ(s.windows[0].probability, 0.5);
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_EQ(s.links[0].to, 1);
  EXPECT_DOUBLE_EQ(s.links[0].factor, 10);
  EXPECT_LT(s.links[0].delay_s, 0);
}

TEST(StragglersTable, BadArraysAndWindowsNameTheirPath) {
  const std::string e = error_of(R"(
[stragglers]
slow_peers = [1, "two"]
slow_factors = [1, 2, 3]
distribution = "gamma"
[[stragglers.windows]]
from_iteration = 5
to_iteration = 2
colour = "red"
[[stragglers.links]]
from = 1
)");
  EXPECT_THAT(e, HasSubstr("stragglers.slow_peers[1]: expected an integer"));
  EXPECT_THAT(e, HasSubstr("stragglers.slow_factors"));
  EXPECT_THAT(e, HasSubstr("stragglers.distribution"));
  EXPECT_THAT(e, HasSubstr("stragglers.windows[0].to_iteration"));
  EXPECT_THAT(e, HasSubstr("stragglers.windows[0].colour"));
  EXPECT_THAT(e, HasSubstr("stragglers.links[0]: needs from"));
}

TEST(SimTable, ReadsEveryKeyAndRejectsBadOnes) {
  const ExperimentConfig c = parse(R"(
[sim]
threads = 2
eval_interval_s = 2.5
target_accuracy = 0.9
target_loss = 0.3
stop_at_target = true
per_peer_eval = false
)");
  EXPECT_EQ(c.sim.threads, 2);
  EXPECT_DOUBLE_EQ(c.sim.eval_interval_s, 2.5);
  EXPECT_DOUBLE_EQ(c.sim.target_accuracy, 0.9);
  EXPECT_DOUBLE_EQ(c.sim.target_loss, 0.3);
  EXPECT_TRUE(c.sim.stop_at_target);
  EXPECT_FALSE(c.sim.per_peer_eval);
  const std::string e = error_of("[sim]\nthreads = 0\ntarget_accuracy = 2\n");
  EXPECT_THAT(e, HasSubstr("sim.threads"));
  EXPECT_THAT(e, HasSubstr("sim.target_accuracy"));
}

}  // namespace
}  // namespace fastk::node
