// A TorchScript model (learning/torchscript/) in the real runtime: the vector is the vector,
// so real peers end with `fastk sim`'s bits, policies, coding and compression run on it, the
// exported MLP learns Fashion-MNIST on real peers, and a bad module stops `fastk run` before
// any peer starts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/system_support.h"
#include "tests/support/torchscript_files.h"

namespace fastk::systest {
namespace {

TinyExperiment torchscript_experiment(const std::filesystem::path& dir, const std::string& module,
                                      int peers, std::int64_t iterations,
                                      const std::string& policy) {
  TinyExperiment e = tiny_experiment(peers, iterations, policy);
  e.model = "torchscript";
  e.model_extra = "file = \"" + testing::test_module(module, dir).string() + "\"\n";
  return e;
}

TEST(TorchScriptRun, RealPeersEqualTheSimulationBitForBit) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = torchscript_experiment(dir, "tiny_mlp", 4, 150, "full");
  e.optimizer_extra = "momentum = 0.9\n";
  const auto config = write_config(dir, e);
  ASSERT_TRUE(run_real_then_sim(dir, config));
  for (int i = 0; i < e.peers; ++i) expect_simulations_model(dir / "real", sim_dir(dir), i);
  const auto summary = read_json(dir / "real" / "summary.json");
  EXPECT_GT(summary["final_test_accuracy"].get<double>(), 0.8) << summary.dump(2);
}

// The adaptive policy (it asks for the gradient-noise estimates), coding and compression:
// each run ends ok and learns.
TEST(TorchScriptRun, EveryKindOfRunTrainsIt) {
  struct Kind {
    std::string policy, consensus, extra;
  };
  const std::vector<Kind> kinds = {
      {"adaptive", "", ""},
      {"full", "", "[coding]\nscheme = \"frc\"\nstragglers = 1\n"},
      {"full", "order = \"adapt_then_combine\"\n", "[compression]\nkind = \"int8\"\n"},
  };
  for (const auto& [policy, consensus, extra] : kinds) {
    const auto dir = testutil::fresh_test_dir("fastk_sys");
    TinyExperiment e = torchscript_experiment(dir, "tiny_mlp", 4, 200, policy);
    e.consensus_extra = consensus;
    e.extra = extra;
    FastkProcess run({"run", write_config(dir, e).string(), "--no-plots"});
    const auto status = run.wait(Seconds(120));
    ASSERT_TRUE(status && status->ok()) << extra << run.output();
    const auto summary = read_json(run_dir(dir) / "summary.json");
    EXPECT_GT(summary["final_test_accuracy"].get<double>(), 0.8) << extra << summary.dump(2);
  }
}

TEST(TorchScriptRun, ABadModuleStopsTheRunBeforeAnyPeerStarts) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const TinyExperiment e = torchscript_experiment(dir, "wrong_output", 4, 100, "full");
  FastkProcess run({"run", write_config(dir, e).string(), "--no-plots"});
  const auto status = run.wait(Seconds(60));
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(status->ok());
  EXPECT_THAT(run.output(), ::testing::HasSubstr("wrong_output.pt': returns a tensor of shape"));
  EXPECT_FALSE(std::filesystem::exists(peer_dir(run_dir(dir), 0))) << run.output();
}

// The bar: the exported MLP, 4 real peers, the quickstart's settings, Fashion-MNIST.
TEST(TorchScriptRun, TheExportedMlpLearnsFashionMnistOnFourRealPeers) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const auto mlp = testing::exported_model("mlp", dir);
  FastkProcess run({"run", "experiments/configs/quickstart.toml", "--no-plots", "--set",
                    "topology.peers=4", "--set", "model.kind=\"torchscript\"", "--set",
                    "model.file=\"" + mlp.string() + "\"", "--set", "stragglers.slow_peers=[]",
                    "--set", "stragglers.slow_factors=[]", "--set",
                    "cluster.base_port=" + std::to_string(free_base_port(4)), "--set",
                    "run.output=\"" + (dir / "runs").string() + "\""});
  const auto status = run.wait(Seconds(300));
  ASSERT_TRUE(status && status->ok()) << run.output();
  const auto summary = read_json(dir / "runs" / "quickstart" / "summary.json");
  EXPECT_GE(summary["final_test_accuracy"].get<double>(), 0.75) << summary.dump(2);
}

}  // namespace
}  // namespace fastk::systest
