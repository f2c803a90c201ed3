#include "node/config/resolved_config.h"

#include "node/config/tables.h"

namespace fastk::node {

nlohmann::ordered_json resolved_config(const ExperimentConfig& c,
                                       const topology::Topology& topology, double eval_interval_s) {
  nlohmann::ordered_json j;
  j["run"] = run_table_json(c.run, eval_interval_s);
  j["topology"] = topology_table_json(topology.spec, topology.graph.size());
  j["data"] = data_table_json(c.data);
  j["model"] = model_table_json(c.model);
  j["optimizer"] = optimizer_table_json(c.optimizer);
  j["consensus"] = consensus_table_json(c.consensus);
  j["coding"] = coding_table_json(c.consensus);
  j["compression"] = compression_table_json(c.consensus);
  j["stragglers"] = stragglers_table_json(c.stragglers);
  j["cluster"] = cluster_table_json(c.cluster);
  j["security"] = security_table_json(c.security);
  if (c.consensus.protocol.attack) j["attack"] = attack_table_json(c.consensus);
  j["sim"] = sim_table_json(c.sim);
  if (!c.churn.schedule.empty()) j["churn"] = churn_table_json(c.churn);
  return j;
}

}  // namespace fastk::node
