// The inputs of a simulation as resolved (defaults filled in, derived topology shape), as
// JSON: what a run actually used, next to its metrics.
#pragma once

#include <filesystem>

#include "node/sim/simulation.h"
#include "topology/topology.h"

namespace fastk::node::sim {

void write_resolved_inputs(const std::filesystem::path& path, const SimulationInputs& inputs,
                           const topology::Topology& topology);

}  // namespace fastk::node::sim
