#include "node/report/placement_report.h"

#include <iomanip>
#include <sstream>

namespace fastk::node {
namespace {

constexpr int kListedPeers = 16;  // beyond this, the text lists the first peers only

std::string ids(const std::vector<int>& partitions) {
  std::ostringstream s;
  s << "{";
  for (std::size_t i = 0; i < partitions.size(); ++i) s << (i ? " " : "") << partitions[i];
  s << "}";
  return s.str();
}

double mean_size(const std::vector<std::vector<int>>& lists) {
  double total = 0;
  for (const auto& l : lists) total += static_cast<double>(l.size());
  return lists.empty() ? 0 : total / static_cast<double>(lists.size());
}

}  // namespace

void write_placement_text(std::ostream& out, const coding::Placement& placement,
                          const coding::NeighbourhoodCodeSpec& spec) {
  const int n = static_cast<int>(placement.blocks.size());
  const int size = coding::block_size(spec);
  out << "coding: " << to_string(spec.scheme);
  if (coding::cyclic(spec.scheme)) {
    out << ", a peer's neighbours form one cyclic block, each holding " << size
        << " of its partitions; all but any " << spec.stragglers << " of them cover it";
  } else {
    out << ", any " << coding::members_needed(spec, size) << " member(s) of a block of " << size
        << " cover it";
  }
  if (coding::cuts_messages(spec.scheme) && spec.sub_blocks > 1)
    out << ", each sending 1/" << spec.sub_blocks << " of a gradient";
  out << (spec.dynamic_roles ? ", dynamic roles" : ", static roles") << "\n";
  out << std::fixed << std::setprecision(2) << "  stored partitions per peer: max "
      << placement.max_stored() << ", mean " << mean_size(placement.stored)
      << " (uncoded: 1)\n  computed per iteration: max " << placement.max_computed() << ", mean "
      << mean_size(placement.computed)
      << (spec.split_batch ? " (one mini-batch spread over them)" : " (a mini-batch each)") << "\n";
  for (int p = 0; p < n && p < kListedPeers; ++p) {
    const auto& blocks = placement.blocks[static_cast<std::size_t>(p)];
    out << "  peer " << p << ": blocks";
    for (const auto& block : blocks) out << " " << ids(block);
    out << "  stores " << ids(placement.stored[static_cast<std::size_t>(p)]) << "\n";
  }
  if (n > kListedPeers) out << "  ... (" << n - kListedPeers << " more peers; --json lists all)\n";
}

nlohmann::ordered_json placement_json(const coding::Placement& placement,
                                      const coding::NeighbourhoodCodeSpec& spec) {
  nlohmann::ordered_json j;
  j["scheme"] = to_string(spec.scheme);
  j["stragglers"] = spec.stragglers;
  if (coding::cuts_messages(spec.scheme)) j["sub_blocks"] = spec.sub_blocks;
  j["dynamic_roles"] = spec.dynamic_roles;
  j["split_batch"] = spec.split_batch;
  j["max_stored"] = placement.max_stored();
  j["mean_stored"] = mean_size(placement.stored);
  j["max_computed"] = placement.max_computed();
  j["mean_computed"] = mean_size(placement.computed);
  auto& peers = j["peers"] = nlohmann::ordered_json::array();
  for (std::size_t p = 0; p < placement.blocks.size(); ++p) {
    peers.push_back({{"peer", p},
                     {"blocks", placement.blocks[p]},
                     {"stored", placement.stored[p]},
                     {"computed", placement.computed[p]}});
  }
  return j;
}

}  // namespace fastk::node
