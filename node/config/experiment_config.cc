#include "node/config/experiment_config.h"

#include <fstream>
#include <sstream>

#include "node/config/tables.h"

namespace fastk::node {

std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir) {
  if (path.empty()) return path;
  std::filesystem::path p(path);
  return p.is_absolute() ? path : (base_dir / p).lexically_normal().string();
}

ExperimentConfig parse_config(std::string_view text, const std::string& source,
                              const std::filesystem::path& base_dir) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw ConfigError(source + ":" + std::to_string(where.line) + ":" +
                      std::to_string(where.column) +
                      ": TOML syntax error: " + std::string(e.description()));
  }
  ExperimentConfig config;
  config.source = source;
  ConfigErrors errors;
  TableReader top(&root, "", errors);
  TableReader run = top.table("run");
  read_run_table(run, config.run);
  TableReader topology = top.table("topology");
  read_topology_table(topology, config.topology, config.run.seed, base_dir);
  TableReader cluster = top.table("cluster");
  read_cluster_table(cluster, config.cluster, config.topology.peers);
  TableReader data = top.table("data");
  read_data_table(data, config.data, config.run.seed, base_dir);
  TableReader model = top.table("model");
  read_model_table(model, config.model, config.run.seed);
  TableReader optimizer = top.table("optimizer");
  read_optimizer_table(optimizer, config.optimizer, config.run.seed);
  TableReader consensus = top.table("consensus");
  read_consensus_table(consensus, config.consensus);
  TableReader coding = top.table("coding");
  read_coding_table(coding, config.consensus, config.topology);
  TableReader stragglers = top.table("stragglers");
  read_stragglers_table(stragglers, config.stragglers, config.run.seed);
  TableReader sim = top.table("sim");
  read_sim_table(sim, config.sim);
  top.finish();
  errors.throw_if_any(source);
  return config;
}

ExperimentConfig load_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read config file '" + path.string() + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path.string(), path.parent_path());
}

}  // namespace fastk::node
