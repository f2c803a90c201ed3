// The protocol's guard (docs/design.md, "Adding a mixing variant"): a fixed set of runs, one
// per variant and policy, whose outputs are recorded in tests/golden/protocol_matrix.txt. A
// change to consensus/ that is meant to change nothing must leave every one identical, bit
// for bit: the final model of every peer and, in the simulator, every CSV. Runs under policy
// full are deterministic on real peers too (they mix exactly each neighbour's iteration-k
// model), so those run in both runtimes and both must match the record.
//
// The kernels of one instruction-set level give the same bits on every CPU that runs them;
// the runs force the baseline (FASTK_ISA=x86-64), which every build of the default
// FASTK_MARCH has. To record a case anew (a change that is meant to change results):
// FASTK_RECORD_GOLDEN=1 ctest -R ProtocolMatrix, then review the diff of the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "tests/support/golden.h"
#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

struct MatrixCase {
  std::string name;
  TinyExperiment experiment;
  bool real_too = false;  // deterministic on real peers (policy full)
};

void PrintTo(const MatrixCase& c, std::ostream* os) { *os << c.name; }

using testutil::fingerprint;

// The simulator's outputs that do not depend on the wall clock: every peer's final model and
// the CSVs (virtual times only).
testutil::GoldenCase sim_prints(const std::filesystem::path& run, int peers) {
  testutil::GoldenCase prints;
  for (const char* csv :
       {"iterations.csv", "neighbours.csv", "evaluation.csv", "peer_accuracy.csv"}) {
    prints[csv] = fingerprint(read_bytes(run / csv));
  }
  for (int i = 0; i < peers; ++i) {
    prints["model-" + std::to_string(i)] =
        fingerprint(read_bytes(peer_dir(run, i) / "model-final.f32"));
  }
  return prints;
}

bool run_fastk(const std::vector<std::string>& args) {
  FastkProcess process(args);
  const auto status = process.wait(Seconds(120));
  EXPECT_TRUE(status && status->ok()) << process.output();
  return status && status->ok();
}

class ProtocolMatrix : public ::testing::TestWithParam<MatrixCase> {
 protected:
  void SetUp() override { ::setenv("FASTK_ISA", "x86-64", 1); }
  void TearDown() override { ::unsetenv("FASTK_ISA"); }
};

TEST_P(ProtocolMatrix, OutputsAreTheRecordedOnesBitForBit) {
  const MatrixCase& c = GetParam();
  const auto dir = testutil::fresh_test_dir("fastk_matrix");
  TinyExperiment e = c.experiment;
  e.base_port = free_base_port(e.peers);
  const auto config = write_config(dir, e);
  ASSERT_TRUE(run_fastk({"sim", config.string(), "--quiet", "--no-plots"}));
  const auto recorded =
      testutil::expect_golden("protocol_matrix.txt", c.name, sim_prints(sim_dir(dir), e.peers));
  if (recorded.empty() || !c.real_too) return;
  ASSERT_TRUE(run_fastk({"run", config.string(), "--no-plots"}));
  for (int i = 0; i < e.peers; ++i) {
    const std::string key = "model-" + std::to_string(i);
    EXPECT_EQ(fingerprint(read_bytes(peer_dir(run_dir(dir), i) / "model-final.f32")),
              recorded.at(key))
        << c.name << ": real peer " << i << "'s final model is not the recorded one";
  }
}

// Uneven compute (a fifth of the gradients 20 times slower), so that what the backup
// policies skip and the order messages come in matter.
TinyExperiment base(int peers = 4, const std::string& policy = "full") {
  TinyExperiment e = tiny_experiment(peers, 100, policy);
  e.peer_timeout_ms = 30000;
  e.startup_timeout_ms = 30000;
  e.extra = "[stragglers]\ntransient_probability = 0.2\ntransient_factor = 20\n";
  return e;
}

TinyExperiment with(TinyExperiment e, const std::string& consensus, const std::string& extra = "",
                    const std::string& optimizer = "") {
  e.consensus_extra += consensus;
  e.extra += extra;
  e.optimizer_extra += optimizer;
  return e;
}

std::string compressor(const std::string& kind) {
  return "[compression]\nkind = \"" + kind + "\"\n" +
         (kind == "top_k" || kind == "random_k" ? "fraction = 0.25\n" : "");
}

std::vector<MatrixCase> cases() {
  constexpr const char* kAtc = "order = \"adapt_then_combine\"\n";
  constexpr const char* kMomentum = "momentum = 0.9\nweight_decay = 1e-3\n";
  TinyExperiment one_peer = base(8);
  one_peer.topology = "one_peer_exponential";
  TinyExperiment directed = base(6);
  directed.topology = "edge_list";
  directed.topology_extra =
      "file = \"" +
      (std::filesystem::path(FASTK_SOURCE_DIR) / "tests" / "golden" / "directed_6.txt").string() +
      "\"\ndirected = true\n";
  TinyExperiment directed_static = directed;
  directed_static.policy = "static";
  TinyExperiment hypercube = base(8);
  hypercube.topology = "hypercube";
  TinyExperiment complete = base(6);  // five neighbours: trimmed_mean keeps 4 of 6, median 2
  complete.topology = "complete";
  TinyExperiment hypercube_static = hypercube;
  hypercube_static.policy = "static";
  std::vector<MatrixCase> all = {
      {"full", base(), true},
      {"full_atc_momentum", with(base(), kAtc, "", kMomentum), true},
      {"static", with(hypercube_static, "backups = 2\n")},
      {"half", base(4, "half")},
      {"deadline", base(4, "deadline")},
      {"adaptive", base(4, "adaptive")},
      {"adaptive_momentum_staleness", with(base(4, "adaptive"), "staleness = 2\n", "", kMomentum)},
      {"adaptive_max_gap", with(base(4, "adaptive"), "max_gap = 2\n")},
      {"ad_psgd", base(4, "ad_psgd")},
      {"push_sum_directed", with(directed, "push_sum = true\n"), true},
      {"push_sum_directed_static", with(directed_static, "push_sum = true\nbackups = 1\n")},
      {"one_peer_exponential", one_peer, true},
      {"one_peer_exponential_adaptive",
       [] {
         TinyExperiment e = base(8, "adaptive");
         e.topology = "one_peer_exponential";
         e.m_min = 0;
         return e;
       }()},
      {"frc", with(hypercube, "", "[coding]\nscheme = \"frc\"\nstragglers = 2\n")},
      {"mds", with(hypercube, "", "[coding]\nscheme = \"mds\"\nstragglers = 1\nsub_blocks = 2\n")},
      {"keep_connected", with(hypercube_static, "backups = 2\nkeep_connected = true\n")},
      {"median", with(base(), "aggregation = \"median\"\n"), true},
      {"trimmed_mean", with(complete, "aggregation = \"trimmed_mean\"\n"), true},
      {"clipped_gossip", with(base(), "aggregation = \"clipped_gossip\"\n"), true},
      {"clipped_gossip_adaptive", with(base(4, "adaptive"), "aggregation = \"clipped_gossip\"\n")},
      // One neighbour per round: the radius comes from the models last mixed.
      {"clipped_gossip_one_peer_exponential", with(one_peer, "aggregation = \"clipped_gossip\"\n"),
       true},
  };
  // [attack]: peer 2 forges (or trains on flipped labels); the mean model is the honest peers'.
  for (const char* kind : {"large", "sign_flip", "alie", "noise", "label_flip"}) {
    const std::string attack = "[attack]\npeers = [2]\nkind = \"" + std::string(kind) + "\"\n";
    all.push_back({std::string("attack_") + kind,
                   with(base(), "aggregation = \"clipped_gossip\"\n", attack), true});
  }
  for (const char* kind : {"fp16", "int8", "qsgd", "top_k", "random_k"}) {
    const bool real = std::string(kind) == "int8";
    all.push_back({std::string("choco_") + kind, with(base(), kAtc, compressor(kind)), real});
  }
  all.push_back({"choco_int8_adaptive", with(base(4, "adaptive"), kAtc, compressor("int8"))});
  // [consensus] local_steps: gossip every third iteration, local SGD steps in between.
  constexpr const char* kLocal = "local_steps = 3\n";
  all.push_back({"local_steps", with(base(), kLocal, "", kMomentum), true});
  all.push_back({"local_steps_adaptive", with(base(4, "adaptive"), kLocal)});
  all.push_back({"local_steps_one_peer_exponential", with(one_peer, kLocal), true});
  all.push_back({"local_steps_choco_int8",
                 with(base(), std::string(kAtc) + kLocal, compressor("int8")), true});
  // Error reset: top_k differences, an fp16 one on every second gossip.
  all.push_back(
      {"local_steps_choco_top_k_reset",
       with(base(), std::string(kAtc) + kLocal, compressor("top_k") + "reset_every = 2\n"), true});
  // [consensus] validate: the honest peers score what they would mix and leave out peer 2's.
  const std::string large = "[attack]\npeers = [2]\nkind = \"large\"\n";
  constexpr const char* kLossScore = "validate = true\nvalidation_score = \"loss\"\n";
  all.push_back({"validate_attack_large", with(base(), kLossScore, large), true});
  all.push_back(
      {"validate_first_order_attack_large", with(base(), "validate = true\n", large), true});
  all.push_back(
      {"validate_adaptive_local_steps", with(base(4, "adaptive"), std::string(kLossScore) + kLocal,
                                             "[attack]\npeers = [2]\nkind = \"noise\"\n")});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, ProtocolMatrix, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<MatrixCase>& param) {
                           return param.param.name;
                         });

}  // namespace
}  // namespace fastk::systest
