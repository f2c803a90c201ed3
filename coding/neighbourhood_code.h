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

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fastk::coding {

// frc: each member of a block sends the block's plain sum (any one member covers it).
// mds: the communication-efficient code (docs/coding.md §4.2, §7.6): each member of a block
// of s+m sends one 1/m-length combination of the sum's m sub-vectors (grouped_mds_code.h),
// and any m members cover it.
// crc and cyclic_mds (docs/coding.md §7.7): the neighbours of a peer form one cyclic block;
// member i holds the partitions of members i..i+w-1 (mod the block), w = s+1 for crc
// (Tandon et al.'s cyclic repetition code) and s+m for cyclic_mds (the cyclic MDS code; with
// m > 1 Ye and Abbe's communication-efficient form, 1/m-length messages), and any
// members - s of them cover it. Their decoders cancel terms with mixed signs.
enum class Scheme { kNone, kFrc, kMds, kCyclicRepetition, kCyclicMds };
// "none", "frc", "mds", "crc", "cyclic_mds"; throws std::invalid_argument otherwise.
Scheme parse_scheme(const std::string& name);
std::string to_string(Scheme scheme);
// Whether a member's message is a linear share tied to its place in its block (every scheme
// but frc): decoded from shares of one iteration, no dynamic roles.
bool sends_shares(Scheme scheme);
// Whether coding.sub_blocks cuts the messages (mds, cyclic_mds).
bool cuts_messages(Scheme scheme);
// Whether the neighbours form one cyclic block (crc, cyclic_mds).
bool cyclic(Scheme scheme);

// The [coding] table of an experiment config.
struct NeighbourhoodCodeSpec {
  Scheme scheme = Scheme::kNone;
  int stragglers = 1;          // s: late members tolerated in each block
  int sub_blocks = 2;          // m (mds, cyclic_mds): messages are 1/m of a gradient
  double deadline_s = 0;       // after the own gradient: step with the covered blocks; 0 = none
  bool rescale = true;         // dropped blocks: average over covered partitions (unbiased)
  bool split_batch = true;     // spread one mini-batch over the computed partitions
  bool dynamic_roles = false;  // re-assign neighbours to blocks every iteration (GC-DC)
};

using Block = std::vector<int>;  // partition ids (= home peers), sorted

// Blocks with more subsets than this to check are refused: choosing an mds block's code
// conditions every m-subset for 10 seeds (a block of 16 with m = 4: 1820), choosing a
// cyclic_mds one decodes every (members - s)-subset for 20 (coding/share_code.cc).
inline constexpr std::uint64_t kMaxMdsSubsets = 5000;

// Partitions each member of a block holds: s+1 for frc and crc, s+m for mds and cyclic_mds.
// Under frc and mds it is also the block's size (the last block may be smaller).
int block_size(const NeighbourhoodCodeSpec& spec);
// Members of a block of `members` that cover it: 1 for frc; for mds m, or all of a smaller
// block, whose code then cuts the sum into that many sub-vectors; members - s for the cyclic
// codes.
int members_needed(const NeighbourhoodCodeSpec& spec, int members);

// Blocks of N[owner]: {owner}, then `neighbours` (any order) sorted, in chunks of s+1.
// Throws std::invalid_argument if stragglers < 0 or the owner is among its neighbours.
std::vector<Block> neighbourhood_blocks(int owner, std::vector<int> neighbours, int stragglers);

// Blocks of N[owner] under `spec`: neighbourhood_blocks with blocks of block_size(spec), or
// for the cyclic codes {owner} and one block of all neighbours, which must number at least
// block_size(spec) (throws std::invalid_argument naming the owner otherwise).
std::vector<Block> code_blocks(const NeighbourhoodCodeSpec& spec, int owner,
                               std::vector<int> neighbours);
// The partitions the member at `position` of `block` holds and sends a combination of: the
// whole block, or under the cyclic codes its window of block_size(spec) (sorted).
Block member_partitions(const NeighbourhoodCodeSpec& spec, const Block& block,
                        std::size_t position);

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
// The placement of any scheme: each member stores and computes its member_partitions in
// every block it belongs to (all of N(p) too under dynamic roles).
Placement place_code(const std::vector<std::vector<int>>& neighbours,
                     const NeighbourhoodCodeSpec& spec);

// The block of `blocks` that contains `member`; throws std::invalid_argument if none does.
const Block& block_of(const std::vector<Block>& blocks, int member);

}  // namespace fastk::coding
