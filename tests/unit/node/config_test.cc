#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"
#include "tests/support/config_parsing.h"

namespace fastk::node {
namespace {

using ::testing::HasSubstr;
using topology::TopologyKind;
using topology::WeightRule;

using testing::error_of;
using testing::parse;

// A file that sets nothing is refused (the wrong file, or one not saved yet); one key is
// enough for every other to take its default.
TEST(Config, AnEmptyFileIsRefusedAndDefaultsFillTheRest) {
  EXPECT_THAT(error_of(""), HasSubstr("the config is empty"));
  EXPECT_THAT(error_of("# only a comment\n"), HasSubstr("the config is empty"));
  ExperimentConfig c = parse("[run]\niterations = 1000\n");
  EXPECT_EQ(c.run.name, "fastk");
  EXPECT_EQ(c.run.seed, 1u);
  EXPECT_EQ(c.topology.kind, TopologyKind::kRing);
  EXPECT_EQ(c.topology.peers, 8);
  EXPECT_EQ(c.topology.weights, WeightRule::kMetropolisHastings);
}

TEST(Config, ReadsTopologyAndInheritsTheRunSeed) {
  ExperimentConfig c = parse(R"(
[run]
name = "t"
seed = 42
[topology]
kind = "random_regular"
peers = 16
degree = 3
weights = "max_degree"
)");
  EXPECT_EQ(c.topology.kind, TopologyKind::kRandomRegular);
  EXPECT_EQ(c.topology.peers, 16);
  EXPECT_EQ(c.topology.degree, 3);
  EXPECT_EQ(c.topology.seed, 42u);
  EXPECT_EQ(c.topology.weights, WeightRule::kMaxDegree);
  EXPECT_EQ(parse("[run]\nseed = 4\n[topology]\nseed = 9\n").topology.seed, 9u);
}

TEST(Config, RelativeFilesResolveAgainstTheConfigFolder) {
  ExperimentConfig c = parse("[topology]\nkind = \"edge_list\"\nfile = \"graphs/e.txt\"\n");
  EXPECT_EQ(c.topology.file, "/cfg/graphs/e.txt");
  EXPECT_EQ(c.topology.peers, 0);  // taken from the file
  EXPECT_EQ(parse("[topology]\nkind = \"edge_list\"\nfile = \"/abs/e.txt\"\n").topology.file,
            "/abs/e.txt");
}

TEST(Config, EveryProblemIsReportedWithItsPath) {
  std::string e = error_of(R"(
[run]
iterations = 0
[topology]
kind = "rign"
peers = "eight"
rewire = 1.5
degre = 4
[extra]
)");
  EXPECT_THAT(e, HasSubstr("exp.toml: 6 problems"));
  EXPECT_THAT(e, HasSubstr("run.iterations: expected an integer >= 1, got 0"));
  EXPECT_THAT(e, HasSubstr("topology.kind: unknown topology kind 'rign', expected one of ring"));
  EXPECT_THAT(e, HasSubstr("topology.peers: expected an integer, got a string"));
  EXPECT_THAT(e, HasSubstr("topology.rewire: expected a number in [0, 1], got 1.5"));
  EXPECT_THAT(e, HasSubstr("topology.degre: unknown key (did you mean 'degree'?)"));
  EXPECT_THAT(e, HasSubstr("extra: unknown key"));
}

TEST(Config, MissingFilesForFileKindsAreErrors) {
  EXPECT_THAT(error_of("[topology]\nkind = \"edge_list\"\n"),
              HasSubstr("topology.file: kind = \"edge_list\" needs file"));
  EXPECT_THAT(error_of("[topology]\nweights = \"file\"\n"), HasSubstr("topology.weights_file"));
  // fastk run empties <output>/<name>/peers: a name may not reach outside the output folder.
  for (const char* name : {"..", ".", "a/b", ""}) {
    EXPECT_THAT(error_of(std::string("[run]\nname = \"") + name + "\"\n"),
                HasSubstr("run.name: expected a folder name"))
        << name;
  }
}

// Directed graphs need push-sum, push-sum needs a fixed graph, and the spanning tree of
// keep_connected an undirected one; each refusal names the key to change.
TEST(Config, DirectedGraphsPushSumAndKeepConnectedFitTogether) {
  EXPECT_THAT(error_of("[topology]\nkind = \"ring\"\ndirected = true\n"),
              HasSubstr("topology.directed: only an edge_list can be directed"));
  EXPECT_THAT(error_of("[topology]\nkind = \"edge_list\"\nfile = \"a.txt\"\ndirected = true\n"),
              HasSubstr("consensus.push_sum: a directed graph (topology.directed = true) needs "
                        "push_sum = true"));
  EXPECT_THAT(error_of("[topology]\nkind = \"one_peer_exponential\"\n[consensus]\n"
                       "push_sum = true\nkeep_connected = true\n"),
              AllOf(HasSubstr("consensus.push_sum: needs a fixed graph"),
                    HasSubstr("consensus.keep_connected: needs a static graph")));
  EXPECT_THAT(error_of("[consensus]\npush_sum = true\n[coding]\nscheme = \"frc\"\n"),
              HasSubstr("push-sum and coding exclude each other"));
  EXPECT_THAT(error_of("[run]\ncheckpoint_every = 100\n[consensus]\npush_sum = true\n"),
              HasSubstr("run.checkpoint_every: a push-sum peer cannot come back"));
}

TEST(Config, SyntaxErrorsGiveLineAndColumn) {
  EXPECT_THAT(error_of("[run]\nname = \"x\nseed = 1\n"), HasSubstr("exp.toml:2:"));
  EXPECT_THAT(error_of("topology = 3\n"), HasSubstr("topology: expected a table, got an integer"));
}

TEST(Config, LoadingAMissingFileSaysWhich) {
  try {
    load_config("/nonexistent/exp.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read config file '/nonexistent/exp.toml'"));
  }
}

}  // namespace
}  // namespace fastk::node

namespace fastk::node {
namespace {

// Every problem with a place in the file says FILE:LINE, as syntax errors do; a value given
// with --set names its override instead.
TEST(ConfigErrors, NameTheFileAndLineOfEachProblem) {
  const std::string message = testing::error_of(
      "[run]\nname = \"x\"\niterations = -5\n\n[cluster]\nhosts = [\"10.0.0.1\", \"a b\"]\n"
      "[[stragglers.links]]\nfrom = 0\n");
  EXPECT_THAT(message, ::testing::HasSubstr("exp.toml:3: run.iterations: expected an integer"));
  EXPECT_THAT(message, ::testing::HasSubstr("exp.toml:6: cluster.hosts[1]: \"a b\""));
  EXPECT_THAT(message, ::testing::HasSubstr("exp.toml:7: stragglers.links[0]: needs from"));
  // A slowdown that would make a run that never ends (issue 15's edge cases).
  EXPECT_THAT(testing::error_of("[stragglers]\nslow_peers = [1]\nslow_factors = [1e12]\n"),
              ::testing::HasSubstr("exp.toml:3: stragglers.slow_factors[0]: expected a slowdown"));
  EXPECT_THAT(testing::error_of("[stragglers]\ntransient_factor = 1e7\n"),
              ::testing::HasSubstr("stragglers.transient_factor"));
  try {
    node::parse_config("[run]\nseed = 1\n", "exp.toml", "/cfg", {"run.seed=-1"});
    ADD_FAILURE() << "a negative seed was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("\n  --set run.seed=-1: run.seed: expected an integer >= 0"));
  }
}

// The message of the ConfigError that parsing `text` with `overrides` gives.
std::string override_error(const std::string& text, const std::vector<std::string>& overrides) {
  try {
    node::parse_config(text, "exp.toml", "/cfg", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the overrides were accepted";
  return "";
}

// A typo in --set is the command line's, not the file's: the problem names the override as
// it was typed, and the first line says how many came from --set, so nobody searches the
// file for a key it does not hold.
TEST(ConfigErrors, ProblemsOfSetOverridesNameTheOverride) {
  const std::string file = "[consensus]\npolicy = \"adaptive\"\n[run]\niterations = 10\n";
  std::string e = override_error(file, {"consensus.policyy=full"});
  EXPECT_THAT(e, ::testing::StartsWith("exp.toml: 1 problem in the config (1 from --set):\n"));
  EXPECT_THAT(e, HasSubstr("\n  --set consensus.policyy=full: consensus.policyy: unknown key"));
  EXPECT_THAT(e, HasSubstr("did you mean"));
  // A bad value replacing one of the file's: the override, not the file's line 4.
  e = override_error(file, {"run.iterations=many"});
  EXPECT_THAT(e, HasSubstr("\n  --set run.iterations=many: run.iterations: expected an integer"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("exp.toml:4")));
  // A table the override made up, a part of an array it wrote, and the last of two
  // overrides of one key; the file's own problem keeps its line.
  e = override_error("[run]\niterations = -1\n",
                     {"optimiser.lr=0.1", "stragglers.slow_peers=[1, 2.5]", "consensus.policy=full",
                      "consensus.policy=fastest"});
  EXPECT_THAT(e, HasSubstr("4 problems in the config (3 from --set):"));
  EXPECT_THAT(e, HasSubstr("\n  exp.toml:2: run.iterations: expected an integer"));
  EXPECT_THAT(e, HasSubstr("\n  --set optimiser.lr=0.1: optimiser: unknown"));
  EXPECT_THAT(e, HasSubstr("\n  --set stragglers.slow_peers=[1, 2.5]: stragglers.slow_peers[1]"));
  EXPECT_THAT(e, HasSubstr("\n  --set consensus.policy=fastest: consensus.policy: "));
  // Problems of the file alone read as before.
  EXPECT_THAT(testing::error_of("[run]\niterations = -1\n"),
              ::testing::StartsWith("exp.toml: 1 problem in the config:\n  exp.toml:2: "));
}

}  // namespace
}  // namespace fastk::node
