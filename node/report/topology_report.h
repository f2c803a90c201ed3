// Renderings of a topology for people (text), scripts (JSON) and Graphviz (DOT).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "topology/facts.h"
#include "topology/topology.h"

namespace fastk::node {

void write_topology_text(std::ostream& out, const topology::Topology& topology,
                         const topology::TopologyFacts& facts);
// `coding`: the placement of a coded run (placement_report.h), or null.
void write_topology_json(std::ostream& out, const topology::Topology& topology,
                         const topology::TopologyFacts& facts, bool with_matrix,
                         const nlohmann::ordered_json* coding = nullptr);
// Edges labelled with their mixing weight W_ij.
void write_topology_dot(std::ostream& out, const topology::Topology& topology);
// W as n rows of n numbers (the format `weights = "file"` reads back).
void write_weight_matrix(std::ostream& out, const topology::MixingMatrix& w);

// "torus 4x4", "random_regular d=4 seed=1", ...
std::string describe_spec(const topology::TopologySpec& spec);

}  // namespace fastk::node
