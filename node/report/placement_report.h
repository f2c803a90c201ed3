// Where a coded run puts its data (coding/neighbourhood_code.h), for `fastk topo`: blocks,
// stored and computed partitions per peer, and the storage and compute load.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "coding/neighbourhood_code.h"

namespace fastk::node {

void write_placement_text(std::ostream& out, const coding::Placement& placement,
                          const coding::NeighbourhoodCodeSpec& spec);
nlohmann::ordered_json placement_json(const coding::Placement& placement,
                                      const coding::NeighbourhoodCodeSpec& spec);

}  // namespace fastk::node
