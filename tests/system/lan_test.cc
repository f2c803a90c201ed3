// Peers on two hosts of a LAN in a box (scripts/lan.sh: network namespaces on a bridge, each
// with its own sshd), started by `fastk run` over real ssh and fetched back with scp, end
// with the simulator's bits under policy full. Needs root and network namespaces: skipped,
// with the reason, where lan.sh says it cannot run.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/system/system_support.h"

namespace fastk::systest {
namespace {

constexpr const char* kLan = "fkci";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class LanInABox : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testutil::fresh_test_dir("fastk_lan");
    const auto log = dir_ / "lan.log";
    const std::string up = std::string("scripts/lan.sh up --hosts 2 --rate 1gbit --name ") + kLan +
                           " > " + log.string() + " 2>&1";
    if (std::system(up.c_str()) != 0) {
      const std::string why = read_text(log);
      if (why.find("must run as root") != std::string::npos ||
          why.find("cannot create network namespaces") != std::string::npos) {
        GTEST_SKIP() << "no LAN in a box here: " << why;
      }
      FAIL() << "scripts/lan.sh up failed:\n" << why;
    }
    std::ifstream hosts(std::string("/run/fastk-lan/") + kLan + "/hosts");
    for (std::string address, ns; hosts >> address >> ns;) addresses_.push_back(address);
    ASSERT_EQ(addresses_.size(), 2u);
  }
  void TearDown() override {
    const std::string down = std::string("scripts/lan.sh down --name ") + kLan + " > /dev/null";
    EXPECT_EQ(std::system(down.c_str()), 0);
  }

  std::filesystem::path dir_;
  std::vector<std::string> addresses_;
};

TEST_F(LanInABox, FastkRunOverSshEndsWithTheSimulationsBits) {
  TinyExperiment e = tiny_experiment(4, 100, "full");
  e.peer_timeout_ms = 30000;  // a stall on a loaded machine must not make a neighbour "gone"
  e.extra = "hosts = [\"" + addresses_[0] + "\", \"" + addresses_[1] + "\"]\n";
  const auto config = write_config(dir_, e);

  FastkProcess real({"run", config.string(), "--no-plots"});
  const auto status = real.wait(Seconds(120));
  ASSERT_TRUE(status.has_value()) << real.output();
  ASSERT_TRUE(status->ok()) << real.output();
  const auto real_run = dir_ / "real";
  std::filesystem::rename(run_dir(dir_), real_run);
  const auto summary = read_json(real_run / "summary.json");
  EXPECT_EQ(summary["ok"], true);
  EXPECT_EQ(summary["outputs_not_fetched"].size(), 0u);

  FastkProcess sim({"sim", config.string(), "--quiet", "--no-plots"});
  const auto sim_status = sim.wait(Seconds(120));
  ASSERT_TRUE(sim_status && sim_status->ok()) << sim.output();
  for (int i = 0; i < e.peers; ++i) {
    const std::string a = read_text(peer_dir(real_run, i) / "model-final.f32");
    const std::string b = read_text(peer_dir(run_dir(dir_), i) / "model-final.f32");
    ASSERT_FALSE(a.empty()) << "peer " << i;
    EXPECT_TRUE(a == b) << "peer " << i << ": peers on two hosts and the simulation differ";
  }
}

}  // namespace
}  // namespace fastk::systest
