#include "coding/neighbourhood_code.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fastk::coding {

Scheme parse_scheme(const std::string& name) {
  if (name == "none") return Scheme::kNone;
  if (name == "frc") return Scheme::kFrc;
  if (name == "mds") return Scheme::kMds;
  if (name == "crc") return Scheme::kCyclicRepetition;
  if (name == "cyclic_mds") return Scheme::kCyclicMds;
  throw std::invalid_argument("unknown coding scheme \"" + name +
                              "\"; expected none, frc, mds, crc or cyclic_mds");
}

std::string to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::kFrc:
      return "frc";
    case Scheme::kMds:
      return "mds";
    case Scheme::kCyclicRepetition:
      return "crc";
    case Scheme::kCyclicMds:
      return "cyclic_mds";
    case Scheme::kNone:
      break;
  }
  return "none";
}

bool sends_shares(Scheme scheme) { return scheme != Scheme::kNone && scheme != Scheme::kFrc; }

bool cuts_messages(Scheme scheme) { return scheme == Scheme::kMds || scheme == Scheme::kCyclicMds; }

bool cyclic(Scheme scheme) {
  return scheme == Scheme::kCyclicRepetition || scheme == Scheme::kCyclicMds;
}

int block_size(const NeighbourhoodCodeSpec& spec) {
  return spec.stragglers + (cuts_messages(spec.scheme) ? spec.sub_blocks : 1);
}

int members_needed(const NeighbourhoodCodeSpec& spec, int members) {
  if (cyclic(spec.scheme)) return members - spec.stragglers;
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

std::vector<Block> code_blocks(const NeighbourhoodCodeSpec& spec, int owner,
                               std::vector<int> neighbours) {
  if (!cyclic(spec.scheme))
    return neighbourhood_blocks(owner, std::move(neighbours), block_size(spec) - 1);
  const int window = block_size(spec);
  if (static_cast<int>(neighbours.size()) < window) {
    throw std::invalid_argument("coding.scheme = \"" + to_string(spec.scheme) + "\": peer " +
                                std::to_string(owner) + " has " +
                                std::to_string(neighbours.size()) +
                                " neighbours, but the code has each of them hold " +
                                std::to_string(window) + " neighbours' partitions (stragglers + " +
                                (cuts_messages(spec.scheme) ? "sub_blocks" : "1") +
                                "): lower coding.stragglers or use a denser topology");
  }
  return neighbourhood_blocks(owner, std::move(neighbours),
                              std::max(0, static_cast<int>(neighbours.size()) - 1));
}

Block member_partitions(const NeighbourhoodCodeSpec& spec, const Block& block,
                        std::size_t position) {
  if (!cyclic(spec.scheme)) return block;
  Block window;
  const auto width = std::min(block.size(), static_cast<std::size_t>(block_size(spec)));
  for (std::size_t t = 0; t < width; ++t) window.push_back(block[(position + t) % block.size()]);
  std::sort(window.begin(), window.end());
  return window;
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
  NeighbourhoodCodeSpec spec;
  spec.scheme = Scheme::kFrc;
  spec.stragglers = stragglers;
  spec.dynamic_roles = dynamic_roles;
  return place_code(neighbours, spec);
}

Placement place_code(const std::vector<std::vector<int>>& neighbours,
                     const NeighbourhoodCodeSpec& spec) {
  const int n = static_cast<int>(neighbours.size());
  Placement placement;
  for (int p = 0; p < n; ++p) {
    for (int q : neighbours[static_cast<std::size_t>(p)]) {
      if (q < 0 || q >= n) {
        throw std::invalid_argument("coding: peer " + std::to_string(p) + " has neighbour " +
                                    std::to_string(q) + " outside [0, " + std::to_string(n) + ")");
      }
    }
    placement.blocks.push_back(code_blocks(spec, p, neighbours[static_cast<std::size_t>(p)]));
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
      for (std::size_t position = 0; position < blocks[b].size(); ++position) {
        const auto q = static_cast<std::size_t>(blocks[b][position]);
        const Block held = member_partitions(spec, blocks[b], position);
        computed[q].insert(held.begin(), held.end());
        stored[q].insert(held.begin(), held.end());
        // Dynamic roles (frc): any neighbour of p may be asked to cover any of p's blocks.
        for (std::size_t c = 1; spec.dynamic_roles && c < blocks.size(); ++c) {
          stored[q].insert(blocks[c].begin(), blocks[c].end());
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
