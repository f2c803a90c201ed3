// The config a run actually used, as JSON (resolved_config.json): every table with its
// defaults filled in and what was derived (the topology's size), for `fastk sim` and
// `fastk run` alike, so that a run's folder says exactly what made it.
#pragma once

#include <nlohmann/json.hpp>

#include "node/config/experiment_config.h"
#include "topology/topology.h"

namespace fastk::node::metrics {

// `eval_interval_s`: the evaluation interval in effect (its default depends on the runtime).
nlohmann::ordered_json resolved_config(const ExperimentConfig& c,
                                       const topology::Topology& topology, double eval_interval_s);

}  // namespace fastk::node::metrics
