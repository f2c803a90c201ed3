// Fractional repetition coding inside every closed neighbourhood N[p] = {p} + N(p) of a
// gossip graph (docs/coding.md §7.1, §7.4). Partition r is peer r's home shard. N[p] is cut
// into blocks: block 0 is {p} (p always has its own gradient), then p's neighbours, sorted,
// in blocks of s+1 (the last one may be smaller). Every member of a block holds the
// block's partitions and sends p the plain sum of their gradients, so p rebuilds the
// neighbourhood sum from any one member per block: no coefficient ever cancels another,
// which keeps the sum exact when members hold different parameters (docs/coding.md §7.2).
//
// Static roles: a neighbour covers its own block. Dynamic roles (GC-DC, docs/coding.md §6.3-6.4
// and §7.5): p re-assigns its neighbours to blocks every iteration; for that every neighbour of p
// stores all of N(p)'s partitions, and the neighbours are split into positions (position g
// = the g-th member of each block) so that each block gets one worker per position.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastk::coding {

// frc: each member of a block sends the block's plain sum (any one member covers it).
// mds: the communication-efficient code (docs/coding.md §4.2, §7.6): each member of a block
// of s+m sends one 1/m-length combination of the sum's m sub-vectors (grouped_mds_code.h),
// and any m members cover it.
enum class Scheme { kNone, kFrc, kMds };
// "none", "frc", "mds"; throws std::invalid_argument otherwise.
Scheme parse_scheme(const std::string& name);
std::string to_string(Scheme scheme);

// The [coding] table of an experiment config.
struct NeighbourhoodCodeSpec {
  Scheme scheme = Scheme::kNone;
  int stragglers = 1;          // s: late members tolerated in each block
  int sub_blocks = 2;          // m (mds only): messages are 1/m of a gradient; blocks of s+m
  double deadline_s = 0;       // after the own gradient: step with the covered blocks; 0 = none
  bool rescale = true;         // dropped blocks: average over covered partitions (unbiased)
  bool split_batch = true;     // spread one mini-batch over the computed partitions
  bool dynamic_roles = false;  // re-assign neighbours to blocks every iteration (GC-DC)
};

using Block = std::vector<int>;  // partition ids (= home peers), sorted

// mds blocks whose m-subsets number more than this are refused: choosing the code conditions
// every one of them for 10 seeds (a block of 16 with m = 4: 1820).
inline constexpr std::uint64_t kMaxMdsSubsets = 5000;

// Members per block of a neighbourhood: s+1 for frc, s+m for mds (the last may be smaller).
int block_size(const NeighbourhoodCodeSpec& spec);
// Members of a block of `members` that cover it: 1 for frc; for mds m, or all of a smaller
// block, whose code then cuts the sum into that many sub-vectors.
int members_needed(const NeighbourhoodCodeSpec& spec, int members);

// Blocks of N[owner]: {owner}, then `neighbours` (any order) sorted, in chunks of s+1.
// Throws std::invalid_argument if stragglers < 0 or the owner is among its neighbours.
std::vector<Block> neighbourhood_blocks(int owner, std::vector<int> neighbours, int stragglers);

// Positions of dynamic roles: position g = the g-th member of every block but block 0.
std::vector<std::vector<int>> role_positions(const std::vector<Block>& blocks);

// Where data sits on the whole graph, and what each peer computes per iteration.
struct Placement {
  std::vector<std::vector<Block>> blocks;  // blocks[p]: the blocks of N[p]
  std::vector<std::vector<int>> stored;    // partitions peer q holds (sorted, own included)
  std::vector<std::vector<int>> computed;  // partitions q computes per iteration, static roles
  int max_stored() const;
  int max_computed() const;
};

// `neighbours[p]` lists p's neighbours (an undirected graph). With dynamic roles every
// neighbour of p stores all of N(p); `computed` is then the static-role assignment that
// the first iteration uses. Throws std::invalid_argument for a bad neighbour list.
Placement place_frc(const std::vector<std::vector<int>>& neighbours, int stragglers,
                    bool dynamic_roles);

// The block of `blocks` that contains `member`; throws std::invalid_argument if none does.
const Block& block_of(const std::vector<Block>& blocks, int member);

}  // namespace fastk::coding
