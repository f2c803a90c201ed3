// The config a run actually used, as JSON (resolved_config.json): every table under its TOML
// keys with the defaults filled in and what was derived (the topology's size), for
// `fastk sim` and `fastk run` alike. Each table's part is written next to its reader
// (tables.h), so a key that is read is a key that is echoed.
#pragma once

#include <nlohmann/json.hpp>

#include "node/config/experiment_config.h"
#include "topology/topology.h"

namespace fastk::node {

// `eval_interval_s`: the evaluation interval in effect (its default depends on the runtime).
nlohmann::ordered_json resolved_config(const ExperimentConfig& config,
                                       const topology::Topology& topology, double eval_interval_s);

}  // namespace fastk::node
