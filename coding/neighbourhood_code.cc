#include "coding/neighbourhood_code.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fastk::coding {

Scheme parse_scheme(const std::string& name) {
  if (name == "none") return Scheme::kNone;
  if (name == "frc") return Scheme::kFrc;
  if (name == "mds") return Scheme::kMds;
  throw std::invalid_argument("unknown coding scheme \"" + name + "\"; expected none, frc or mds");
}

std::string to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::kFrc:
      return "frc";
    case Scheme::kMds:
      return "mds";
    case Scheme::kNone:
      break;
  }
  return "none";
}

int block_size(const NeighbourhoodCodeSpec& spec) {
  return spec.stragglers + (spec.scheme == Scheme::kMds ? spec.sub_blocks : 1);
}

int members_needed(const NeighbourhoodCodeSpec& spec, int members) {
  return spec.scheme == Scheme::kMds ? std::min(spec.sub_blocks, members) : 1;
}

std::vector<Block> neighbourhood_blocks(int owner, std::vector<int> neighbours, int stragglers) {
  if (stragglers < 0) throw std::invalid_argument("coding: stragglers must be >= 0");
  std::sort(neighbours.begin(), neighbours.end());
  if (std::binary_search(neighbours.begin(), neighbours.end(), owner)) {
    throw std::invalid_argument("coding: peer " + std::to_string(owner) +
                                " is listed as its own neighbour");
  }
  std::vector<Block> blocks = {{owner}};
  const auto size = static_cast<std::size_t>(stragglers) + 1;
  for (std::size_t i = 0; i < neighbours.size(); i += size) {
    const std::size_t end = std::min(neighbours.size(), i + size);
    blocks.emplace_back(neighbours.begin() + static_cast<std::ptrdiff_t>(i),
                        neighbours.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return blocks;
}

std::vector<std::vector<int>> role_positions(const std::vector<Block>& blocks) {
  std::vector<std::vector<int>> positions;
  for (std::size_t b = 1; b < blocks.size(); ++b) {
    for (std::size_t g = 0; g < blocks[b].size(); ++g) {
      if (positions.size() <= g) positions.resize(g + 1);
      positions[g].push_back(blocks[b][g]);
    }
  }
  return positions;
}

const Block& block_of(const std::vector<Block>& blocks, int member) {
  for (const Block& block : blocks) {
    if (std::find(block.begin(), block.end(), member) != block.end()) return block;
  }
  throw std::invalid_argument("coding: peer " + std::to_string(member) +
                              " is in no block of this neighbourhood");
}

int Placement::max_stored() const {
  std::size_t most = 0;
  for (const auto& s : stored) most = std::max(most, s.size());
  return static_cast<int>(most);
}

int Placement::max_computed() const {
  std::size_t most = 0;
  for (const auto& c : computed) most = std::max(most, c.size());
  return static_cast<int>(most);
}

Placement place_frc(const std::vector<std::vector<int>>& neighbours, int stragglers,
                    bool dynamic_roles) {
  const int n = static_cast<int>(neighbours.size());
  Placement placement;
  for (int p = 0; p < n; ++p) {
    for (int q : neighbours[static_cast<std::size_t>(p)]) {
      if (q < 0 || q >= n) {
        throw std::invalid_argument("coding: peer " + std::to_string(p) + " has neighbour " +
                                    std::to_string(q) + " outside [0, " + std::to_string(n) + ")");
      }
    }
    placement.blocks.push_back(
        neighbourhood_blocks(p, neighbours[static_cast<std::size_t>(p)], stragglers));
  }
  std::vector<std::set<int>> stored(static_cast<std::size_t>(n));
  std::vector<std::set<int>> computed(static_cast<std::size_t>(n));
  for (int q = 0; q < n; ++q) {
    stored[static_cast<std::size_t>(q)].insert(q);
    computed[static_cast<std::size_t>(q)].insert(q);
  }
  for (int p = 0; p < n; ++p) {
    const auto& blocks = placement.blocks[static_cast<std::size_t>(p)];
    for (std::size_t b = 1; b < blocks.size(); ++b) {
      for (int q : blocks[b]) {
        computed[static_cast<std::size_t>(q)].insert(blocks[b].begin(), blocks[b].end());
        for (std::size_t c = 1; c < blocks.size(); ++c) {
          if (c == b || dynamic_roles) {
            stored[static_cast<std::size_t>(q)].insert(blocks[c].begin(), blocks[c].end());
          }
        }
      }
    }
  }
  for (int q = 0; q < n; ++q) {
    const auto& s = stored[static_cast<std::size_t>(q)];
    const auto& c = computed[static_cast<std::size_t>(q)];
    placement.stored.emplace_back(s.begin(), s.end());
    placement.computed.emplace_back(c.begin(), c.end());
  }
  return placement;
}

}  // namespace fastk::coding
