// resolved_config.json says everything a run used: every key a table's reader reads is
// echoed back by that table's JSON (node/config/tables.h), so a key added to a reader without
// its echo fails here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "node/config/tables.h"

namespace fastk::node {
namespace {

std::set<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  return keys;
}

// Reads `text` as the table with `read`, and checks every key the reader asked about is in
// `echo` (except `not_echoed`, each with its reason at the call).
template <typename Read>
void expect_echoed(const std::string& text, Read read,
                   const nlohmann::ordered_json& echo_of_default,
                   const std::set<std::string>& not_echoed = {}) {
  const toml::table table = toml::parse(text);
  ConfigErrors errors;
  TableReader reader(&table, "t", errors);
  const nlohmann::ordered_json echo = read(reader);
  EXPECT_TRUE(errors.empty());
  const std::set<std::string> echoed = keys_of(echo);
  for (const auto& key : reader.known()) {
    if (not_echoed.count(key)) continue;
    EXPECT_TRUE(echoed.count(key)) << "read but not echoed: " << key << " in " << echo.dump();
  }
  EXPECT_EQ(keys_of(echo_of_default), echoed) << "the echo's keys do not depend on the values";
}

TEST(ConfigEcho, EveryKeyATableReadsIsEchoed) {
  expect_echoed(
      "",
      [](TableReader& t) {
        RunConfig c;
        read_run_table(t, c);
        return run_table_json(c, 1);
      },
      run_table_json({}, 1));
  expect_echoed(
      "kind = \"watts_strogatz\"\npeers = 8",
      [](TableReader& t) {
        topology::TopologySpec s;
        read_topology_table(t, s, 1, ".");
        return topology_table_json(s, s.peers);
      },
      topology_table_json({}, 8));
  expect_echoed(
      "",
      [](TableReader& t) {
        ClusterConfig c;
        read_cluster_table(t, c, 8);
        return cluster_table_json(c);
      },
      cluster_table_json({}));
  expect_echoed(
      "",
      [](TableReader& t) {
        SecurityConfig c;
        read_security_table(t, c, ".");
        return security_table_json(c);
      },
      security_table_json({}));
  // Named, not temporaries: GCC 12 warns of an uninitialised std::string inside a
  // temporary ConsensusConfig (a false positive of -Wmaybe-uninitialized).
  const ConsensusConfig consensus_defaults;
  // Keys that are gone are looked at only to reject them with a pointer to their successor.
  expect_echoed("policy = \"adaptive\"",
                [](TableReader& t) {
                  ConsensusConfig c;
                  read_consensus_table(t, c, topology::TopologySpec{});
                  return consensus_table_json(c);
                },
                consensus_table_json(consensus_defaults), {"silence_timeout_s", "micro_batches"});
  expect_echoed(
      "scheme = \"frc\"",
      [](TableReader& t) {
        ConsensusConfig c;
        topology::TopologySpec ring;
        read_coding_table(t, c, ring);
        return coding_table_json(c);
      },
      coding_table_json(consensus_defaults));
  expect_echoed(
      "kind = \"int8\"",
      [](TableReader& t) {
        ConsensusConfig c;
        c.protocol.order = consensus::UpdateOrder::kAdaptThenCombine;
        read_compression_table(t, c, topology::TopologySpec{});
        return compression_table_json(c);
      },
      compression_table_json(consensus_defaults));
  expect_echoed(
      "slow_peers = [1]\nslow_factors = [3]\n[[windows]]\nfrom_iteration = 1\nto_iteration = "
      "2\n[[links]]\nfrom = 0\nto = 1",
      [](TableReader& t) {
        stragglers::DelaySpec s;
        read_stragglers_table(t, s, 1);
        return stragglers_table_json(s);
      },
      stragglers_table_json({}));
  expect_echoed(
      "kind = \"gaussian_mixture\"\npartition = \"dirichlet\"",
      [](TableReader& t) {
        learning::DataSpec s;
        read_data_table(t, s, 1, ".");
        return data_table_json(s);
      },
      data_table_json({}));
  expect_echoed(
      "kind = \"mlp\"\nhidden = [16]",
      [](TableReader& t) {
        learning::ModelSpec s;
        read_model_table(t, s, 1, ".");
        return model_table_json(s);
      },
      model_table_json({}));
  expect_echoed(
      "",
      [](TableReader& t) {
        learning::OptimizerSpec s;
        read_optimizer_table(t, s, 1);
        return optimizer_table_json(s);
      },
      optimizer_table_json({}));
  // sim.threads changes only the speed of a simulation, never an output byte: left out so
  // that the files are the same whatever the thread count. The stop rules are looked at only
  // to say they moved to [run].
  expect_echoed("",
                [](TableReader& t) {
                  SimSettings s;
                  read_sim_table(t, s, ".");
                  return sim_table_json(s);
                },
                sim_table_json({}),
                {"threads", "eval_interval_s", "target_accuracy", "target_loss", "stop_at_target"});
}

}  // namespace
}  // namespace fastk::node
