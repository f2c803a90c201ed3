// The [consensus] and [stragglers] tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"
#include "node/config/protocol_config.h"
#include "tests/support/config_parsing.h"

namespace fastk::node {
namespace {

using ::testing::HasSubstr;

using testing::error_of;
using testing::parse;

TEST(ConsensusTable, DefaultsAreFullPolicyCombineThenAdaptReturnToSelf) {
  const ExperimentConfig c = parse("[run]\n");
  EXPECT_EQ(c.consensus.protocol.policy.kind, consensus::PolicyKind::kFull);
  EXPECT_EQ(c.consensus.protocol.order, consensus::UpdateOrder::kCombineThenAdapt);
  EXPECT_EQ(c.consensus.protocol.renormalisation, consensus::Renormalisation::kReturnToSelf);
  EXPECT_EQ(c.consensus.protocol.m_min, 1);
  EXPECT_EQ(c.stragglers.distribution, stragglers::ComputeDistribution::kNone);
  EXPECT_DOUBLE_EQ(c.stragglers.link_s, 0.0);  // added to what the link takes
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
gradient_stats_every = 7
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
  EXPECT_EQ(p.policy.gradient_stats_every, 7);
}

TEST(ConsensusTable, SilenceTimeoutIsGoneWithAPointerToPeerTimeout) {
  const std::string e = error_of("[consensus]\nsilence_timeout_s = 30\n");
  EXPECT_THAT(e, HasSubstr("consensus.silence_timeout_s: is gone"));
  EXPECT_THAT(e, HasSubstr("cluster.peer_timeout_ms"));
}

TEST(ProtocolConfig, OneBuilderForBothRuntimesWithSilenceOnlyWherePeersCanFail) {
  const ExperimentConfig c = parse(R"(
[run]
iterations = 17
[optimizer]
lr = 0.25
[consensus]
policy = "static"
backups = 1
[cluster]
peer_timeout_ms = 2500
)");
  const auto real = protocol_config(c.consensus, c.run, c.optimizer, c.cluster, PeerRuntime::kReal);
  const auto simulated =
      protocol_config(c.consensus, c.run, c.optimizer, c.cluster, PeerRuntime::kSimulated);
  for (const auto& p : {real, simulated}) {
    EXPECT_EQ(p.iterations, 17);
    EXPECT_DOUBLE_EQ(p.optimizer.lr, 0.25);
    EXPECT_EQ(p.policy.kind, consensus::PolicyKind::kStatic);
    EXPECT_EQ(p.policy.backups, 1);
  }
  EXPECT_DOUBLE_EQ(real.silence_timeout_s, 2.5);
  EXPECT_DOUBLE_EQ(simulated.silence_timeout_s, 0.0);
}

TEST(ConsensusTable, MicroBatchesAreGoneWithAPointerToTheEstimator) {
  const std::string e = error_of("[consensus]\nmicro_batches = 4\n");
  EXPECT_THAT(e, HasSubstr("consensus.micro_batches: is gone"));
  EXPECT_THAT(e, HasSubstr("per-example gradient norms"));
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
[[stragglers.markov_classes]]
peers = [0, 3]
good_to_bad = 0.25
bad_to_good = 0.4
factor = 6
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
  ASSERT_EQ(s.markov_classes.size(), 1u);
  EXPECT_EQ(s.markov_classes[0].peers, (std::vector<int>{0, 3}));
  EXPECT_DOUBLE_EQ(s.markov_classes[0].good_to_bad, 0.25);
  EXPECT_DOUBLE_EQ(s.markov_classes[0].bad_to_good, 0.4);
  EXPECT_DOUBLE_EQ(s.markov_classes[0].factor, 6);
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
[[stragglers.markov_classes]]
good_to_bad = 2
)");
  EXPECT_THAT(e, HasSubstr("stragglers.slow_peers[1]: expected an integer"));
  EXPECT_THAT(e, HasSubstr("stragglers.slow_factors"));
  EXPECT_THAT(e, HasSubstr("stragglers.distribution"));
  EXPECT_THAT(e, HasSubstr("stragglers.windows[0].to_iteration"));
  EXPECT_THAT(e, HasSubstr("stragglers.windows[0].colour"));
  EXPECT_THAT(e, HasSubstr("stragglers.links[0]: needs from"));
  EXPECT_THAT(e, HasSubstr("stragglers.markov_classes[0]: needs peers"));
  EXPECT_THAT(e, HasSubstr("stragglers.markov_classes[0].good_to_bad"));
}

TEST(SimTable, ReadsEveryKeyAndRejectsBadOnes) {
  const ExperimentConfig c = parse(R"(
[sim]
threads = 2
per_peer_eval = true
calibration = "machine.json"
link_rate_mbit = 100
)");
  EXPECT_EQ(c.sim.threads, 2);
  EXPECT_EQ(c.sim.link_rate_mbit, 100.0);
  EXPECT_TRUE(c.sim.per_peer_eval);  // the default is false
  EXPECT_FALSE(parse("[sim]\nthreads = 1\n").sim.per_peer_eval);
  EXPECT_EQ(c.sim.calibration, "/cfg/machine.json");  // relative to the config file
  const std::string e = error_of("[sim]\nthreads = 0\nper_peer_eval = 3\nlink_rate_mbit = -1\n");
  EXPECT_THAT(e, HasSubstr("sim.threads"));
  EXPECT_THAT(e, HasSubstr("sim.per_peer_eval"));
  EXPECT_THAT(e, HasSubstr("sim.link_rate_mbit"));
}

TEST(SimTable, StopRulesThatMovedToRunSayWhere) {
  const std::string e = error_of("[sim]\ntarget_accuracy = 0.8\neval_interval_s = 2\n");
  EXPECT_THAT(e, HasSubstr("sim.target_accuracy: moved to run.target_accuracy"));
  EXPECT_THAT(e, HasSubstr("sim.eval_interval_s: moved to run.eval_interval_s"));
}

TEST(RunTable, ReadsStopRulesAndTheTarget) {
  const ExperimentConfig c = parse(R"(
[run]
iterations = 500
duration_s = 30
eval_interval_s = 2.5
target_accuracy = 0.9
target_loss = 0.3
stop_at_target = true
)");
  EXPECT_EQ(c.run.iterations, 500);
  EXPECT_DOUBLE_EQ(c.run.duration_s, 30);
  EXPECT_DOUBLE_EQ(c.run.evaluation_interval_s(10), 2.5);
  EXPECT_DOUBLE_EQ(c.run.target_accuracy, 0.9);
  EXPECT_DOUBLE_EQ(c.run.target_loss, 0.3);
  EXPECT_TRUE(c.run.stop_at_target);
  // Automatic interval: a twentieth of the duration, else the runtime's fallback.
  EXPECT_DOUBLE_EQ(parse("[run]\nduration_s = 40\n").run.evaluation_interval_s(10), 2.0);
  EXPECT_DOUBLE_EQ(parse("[run]\n").run.evaluation_interval_s(10), 10.0);
  const std::string e = error_of("[run]\nstop_at_target = true\ntarget_accuracy = 2\n");
  EXPECT_THAT(e, HasSubstr("run.target_accuracy"));
  EXPECT_THAT(error_of("[run]\nstop_at_target = true\n"),
              HasSubstr("run.stop_at_target: needs run.target_accuracy or run.target_loss"));
}

TEST(Overrides, SetValuesAreAppliedAndCheckedLikeTheFile) {
  const ExperimentConfig c = node::parse_config(
      "[consensus]\npolicy = \"adaptive\"\n[run]\niterations = 10\n", "exp.toml", "/cfg",
      {"consensus.policy=full", "run.iterations=20", "stragglers.slow_peers=[1, 2]",
       "run.name=other"});
  EXPECT_EQ(c.consensus.protocol.policy.kind, consensus::PolicyKind::kFull);
  EXPECT_EQ(c.run.iterations, 20);
  EXPECT_EQ(c.run.name, "other");  // a bare word is a string
  ASSERT_EQ(c.stragglers.slow_peers.size(), 2u);
  try {
    node::parse_config("", "exp.toml", "/cfg",
                       {"consensus.polcy=full", "run.iterations=-1", "oops"});
    FAIL() << "bad overrides were accepted";
  } catch (const ConfigError& error) {
    const std::string e = error.what();
    EXPECT_THAT(e, HasSubstr("consensus.polcy"));
    EXPECT_THAT(e, HasSubstr("run.iterations"));
    EXPECT_THAT(e, HasSubstr("--set oops: expected table.key=value"));
  }
}

TEST(Overrides, AMalformedKeyPathOrAMissingValueIsNamed) {
  for (const std::string bad : {".run.iterations=5", "run..iterations=5", "run.=5",
                                "run. iterations=5", "run.iterations.=5"}) {
    try {
      node::parse_config("", "exp.toml", "/cfg", {bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("--set " + bad + ": "));
      EXPECT_THAT(error.what(), HasSubstr("is not a key path")) << bad;
    }
  }
  try {
    node::parse_config("", "exp.toml", "/cfg", {"run.iterations= "});
    ADD_FAILURE() << "an empty value was accepted";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no value after '='"));
  }
  // Spaces around a value are TOML's business: they are allowed.
  EXPECT_EQ(node::parse_config("", "exp.toml", "/cfg", {"run.iterations= 7 "}).run.iterations, 7);
}

// [compression] (docs/compression.md): read, its default step by kind, and its refusals named
// among the config's errors (the graph's too), for real peers and the simulator alike.
TEST(CompressionTable, ReadsItsKeysDefaultsTheStepByKindAndNamesItsRefusals) {
  const ExperimentConfig c = parse(R"(
[consensus]
order = "adapt_then_combine"
[compression]
kind = "top_k"
fraction = 0.02
consensus_step = 0.1
)");
  ASSERT_TRUE(c.consensus.protocol.compression.has_value());
  EXPECT_EQ(c.consensus.protocol.compression->kind, compression::Kind::kTopK);
  EXPECT_EQ(c.consensus.protocol.compression->fraction, 0.02);
  EXPECT_EQ(c.consensus.protocol.consensus_step, 0.1);
  EXPECT_NO_THROW(protocol_config(c.consensus, c.run, c.optimizer, c.cluster, PeerRuntime::kReal));
  // Without consensus_step each kind gets its documented default.
  const auto step_of = [](const std::string& kind) {
    return parse("[consensus]\norder = \"adapt_then_combine\"\n[compression]\nkind = \"" + kind +
                 "\"\n")
        .consensus.protocol.consensus_step;
  };
  EXPECT_EQ(step_of("fp16"), 1.0);
  EXPECT_EQ(step_of("int8"), 1.0);
  EXPECT_EQ(step_of("qsgd"), 0.05);
  EXPECT_EQ(step_of("top_k"), 0.05);
  EXPECT_EQ(step_of("random_k"), 0.02);
  EXPECT_FALSE(parse("[run]\n").consensus.protocol.compression.has_value());
  EXPECT_THAT(error_of("[compression]\nkind = \"int8\"\n"),
              HasSubstr("set consensus.order = \"adapt_then_combine\""));
  EXPECT_THAT(error_of("[compression]\nkind = \"zip\"\n"), HasSubstr("compression.kind"));
  EXPECT_THAT(error_of("[consensus]\norder = \"adapt_then_combine\"\n[compression]\n"
                       "kind = \"qsgd\"\nlevels = 300\n"),
              HasSubstr("compression.levels"));
  // A bad policy is named by its own table, not thrown past the compression table.
  EXPECT_THAT(error_of("[consensus]\norder = \"adapt_then_combine\"\npolicy = \"ad_psgd\"\n"
                       "[compression]\nkind = \"int8\"\n"),
              HasSubstr("ad_psgd"));
  EXPECT_THAT(error_of("[consensus]\norder = \"adapt_then_combine\"\n[compression]\n"
                       "kind = \"int8\"\nconsensus_step = 0\n"),
              HasSubstr("compression.consensus_step"));
  EXPECT_THAT(error_of("[topology]\nkind = \"one_peer_exponential\"\npeers = 8\n"
                       "[consensus]\norder = \"adapt_then_combine\"\n[compression]\n"
                       "kind = \"int8\"\n"),
              HasSubstr("needs a static undirected graph"));
  EXPECT_THAT(error_of("[topology]\nkind = \"star\"\npeers = 5\nweights = \"uniform\"\n"
                       "[consensus]\norder = \"adapt_then_combine\"\n[compression]\n"
                       "kind = \"int8\"\n"),
              HasSubstr("needs symmetric weights"));
}

// Error reset's keys (compression/error_reset.h): the reset's compressor takes the table's
// chunk and levels, its step defaults by its kind, and what cannot reset is named.
TEST(CompressionTable, ReadsTheErrorResetKeysAndNamesTheirRefusals) {
  const std::string atc = "[consensus]\norder = \"adapt_then_combine\"\n[compression]\n";
  const ExperimentConfig c =
      parse(atc + "kind = \"top_k\"\nchunk = 64\nreset_every = 4\nreset_kind = \"int8\"\n");
  ASSERT_TRUE(c.consensus.protocol.error_reset.has_value());
  EXPECT_EQ(c.consensus.protocol.error_reset->every, 4);
  EXPECT_EQ(c.consensus.protocol.error_reset->spec.kind, compression::Kind::kInt8);
  EXPECT_EQ(c.consensus.protocol.error_reset->spec.chunk, 64u);
  EXPECT_EQ(c.consensus.protocol.error_reset->consensus_step, 1.0);
  const auto reset = parse(atc + "kind = \"top_k\"\nreset_every = 2\nreset_consensus_step = 0.5\n")
                         .consensus.protocol.error_reset;
  ASSERT_TRUE(reset.has_value());
  EXPECT_EQ(reset->spec.kind, compression::Kind::kFloat16);  // the default
  EXPECT_EQ(reset->consensus_step, 0.5);
  EXPECT_FALSE(parse(atc + "kind = \"int8\"\n").consensus.protocol.error_reset.has_value());
  EXPECT_THAT(error_of(atc + "kind = \"top_k\"\nreset_every = 2\nreset_kind = \"top_k\"\n"),
              HasSubstr("compression.reset_kind must be fp16 or int8"));
  EXPECT_THAT(error_of(atc + "kind = \"top_k\"\nreset_every = 2\nreset_kind = \"qsgd\"\n"),
              HasSubstr("QSGD divided by its tau"));
  // Without reset_every the other keys do nothing (as chunk without int8), but are checked:
  // a resolved config, which echoes them, reads back.
  EXPECT_FALSE(parse(atc + "kind = \"top_k\"\nreset_kind = \"int8\"\n")
                   .consensus.protocol.error_reset.has_value());
  EXPECT_THAT(error_of(atc + "kind = \"top_k\"\nreset_kind = \"zip\"\n"),
              HasSubstr("compression.reset_kind"));
  EXPECT_FALSE(parse("[compression]\nkind = \"none\"\nreset_every = 0\nreset_kind = \"fp16\"\n")
                   .consensus.protocol.compression.has_value());
  EXPECT_THAT(error_of(atc + "reset_every = 2\n"),
              HasSubstr("error reset needs a compression.kind"));
  EXPECT_THAT(error_of(atc + "kind = \"top_k\"\nreset_every = -1\n"),
              HasSubstr("compression.reset_every"));
  EXPECT_THAT(error_of(atc + "kind = \"top_k\"\nreset_every = 2\nreset_consensus_step = 2\n"),
              HasSubstr("compression.reset_consensus_step"));
}

}  // namespace
}  // namespace fastk::node
