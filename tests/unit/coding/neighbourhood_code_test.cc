// FRC placement over a whole gossip graph (coding/neighbourhood_code.h; docs/coding.md §7.4). The
// expected sets are written out by hand from the graphs, not computed by the code under test.
#include "coding/neighbourhood_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace fastk::coding {
namespace {

int wrap(int i, int n) { return ((i % n) + n) % n; }

std::vector<std::vector<int>> ring(int n) {
  std::vector<std::vector<int>> neighbours(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p)
    neighbours[static_cast<std::size_t>(p)] = {wrap(p + 1, n), wrap(p - 1, n)};
  return neighbours;
}

// 4x4 torus, peer r*4+c: north, south, west, east (deliberately unsorted).
std::vector<std::vector<int>> torus4x4() {
  std::vector<std::vector<int>> neighbours(16);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      neighbours[static_cast<std::size_t>(r * 4 + c)] = {
          wrap(r - 1, 4) * 4 + c, wrap(r + 1, 4) * 4 + c, r * 4 + wrap(c - 1, 4),
          r * 4 + wrap(c + 1, 4)};
    }
  }
  return neighbours;
}

TEST(CodingNeighbourhoodTest, RingBlocksAreSelfThenBothNeighbours) {
  const Placement placement = place_frc(ring(8), 1, false);
  ASSERT_EQ(placement.blocks.size(), 8u);
  EXPECT_EQ(placement.blocks[0], (std::vector<Block>{{0}, {1, 7}}));
  EXPECT_EQ(placement.blocks[3], (std::vector<Block>{{3}, {2, 4}}));
  EXPECT_EQ(placement.blocks[7], (std::vector<Block>{{7}, {0, 6}}));
}

// docs/coding.md §7.4: on a ring with s = 1, peer q holds D_q, D_{q-2}, D_{q+2} and computes
// them all.
TEST(CodingNeighbourhoodTest, RingPeersStoreThePartitionsTwoHopsAway) {
  const Placement placement = place_frc(ring(8), 1, false);
  EXPECT_EQ(placement.stored[0], (std::vector<int>{0, 2, 6}));
  EXPECT_EQ(placement.stored[1], (std::vector<int>{1, 3, 7}));
  EXPECT_EQ(placement.stored[5], (std::vector<int>{3, 5, 7}));
  EXPECT_EQ(placement.stored[7], (std::vector<int>{1, 5, 7}));
  for (int q = 0; q < 8; ++q) {
    EXPECT_EQ(placement.computed[static_cast<std::size_t>(q)],
              placement.stored[static_cast<std::size_t>(q)])
        << q;
  }
  EXPECT_EQ(placement.max_stored(), 3);
  EXPECT_EQ(placement.max_computed(), 3);
}

// With s = 0 every neighbour is a block of its own: nothing is replicated.
TEST(CodingNeighbourhoodTest, NoStragglersMeansNoReplication) {
  const Placement placement = place_frc(ring(8), 0, false);
  EXPECT_EQ(placement.blocks[0], (std::vector<Block>{{0}, {1}, {7}}));
  for (int q = 0; q < 8; ++q)
    EXPECT_EQ(placement.stored[static_cast<std::size_t>(q)], (std::vector<int>{q}));
  EXPECT_EQ(placement.max_stored(), 1);
}

// Blocks chunk the *sorted* neighbour ids, so on the torus N[5] = {5}, {1, 4}, {6, 9}: the
// north neighbour is paired with the west one, not with the south one (docs/coding.md §7.4).
// Each peer then stores its own partition plus one per neighbour's block partner: 4 or 5.
TEST(CodingNeighbourhoodTest, TorusBlocksChunkTheSortedNeighbours) {
  const Placement placement = place_frc(torus4x4(), 1, false);
  EXPECT_EQ(placement.blocks[5], (std::vector<Block>{{5}, {1, 4}, {6, 9}}));
  EXPECT_EQ(placement.blocks[0], (std::vector<Block>{{0}, {1, 3}, {4, 12}}));
  // Worked out by hand: peer 0's neighbours are 1, 3, 4, 12 with N(1) = 0,2,5,13 (block
  // {0,2}), N(3) = 0,2,7,15 ({0,2}), N(4) = 0,5,7,8 ({0,5}), N(12) = 0,8,13,15 ({0,8}).
  EXPECT_EQ(placement.stored[0], (std::vector<int>{0, 2, 5, 8}));
  // Peer 5's neighbours are 1, 4, 6, 9 with N(1) = 0,2,5,13 ({5,13}), N(4) = 0,5,7,8
  // ({0,5}), N(6) = 2,5,7,10 ({2,5}), N(9) = 5,8,10,13 ({5,8}).
  EXPECT_EQ(placement.stored[5], (std::vector<int>{0, 2, 5, 8, 13}));
  EXPECT_EQ(placement.max_stored(), 5);
  for (const auto& stored : placement.stored) {
    EXPECT_GE(stored.size(), 4u);
    EXPECT_LE(stored.size(), 5u);
  }
}

// Dynamic roles: any neighbour of p may be given any block of N[p], so it holds all of N(p).
TEST(CodingNeighbourhoodTest, DynamicRolesStoreEveryNeighboursWholeNeighbourhood) {
  const auto graph = torus4x4();
  const Placement placement = place_frc(graph, 1, true);
  // Peer 0's neighbours 1, 3, 4, 12 have N(1) = {0,2,5,13}, N(3) = {0,2,7,15},
  // N(4) = {0,5,7,8}, N(12) = {0,8,13,15}.
  EXPECT_EQ(placement.stored[0], (std::vector<int>{0, 2, 5, 7, 8, 13, 15}));
  for (int p = 0; p < 16; ++p) {
    for (int q : graph[static_cast<std::size_t>(p)]) {
      for (int r : graph[static_cast<std::size_t>(p)]) {
        const auto& stored = placement.stored[static_cast<std::size_t>(q)];
        EXPECT_TRUE(std::binary_search(stored.begin(), stored.end(), r))
            << q << " is a neighbour of " << p << " but does not store " << r;
      }
    }
  }
  // Computation is the static assignment of the first iteration.
  EXPECT_EQ(placement.computed, place_frc(graph, 1, false).computed);
}

TEST(CodingNeighbourhoodTest, BadInputIsAnError) {
  EXPECT_THROW(place_frc({{1}, {0, 2}}, 1, false), std::invalid_argument);  // 2 of 2 peers
  EXPECT_THROW(place_frc({{1}, {-1}}, 1, false), std::invalid_argument);
  EXPECT_THROW(place_frc(ring(8), -1, false), std::invalid_argument);
  EXPECT_THROW(neighbourhood_blocks(0, {1, 2}, -1), std::invalid_argument);
  EXPECT_THROW(neighbourhood_blocks(3, {1, 3, 5}, 1), std::invalid_argument);
  try {
    neighbourhood_blocks(3, {1, 3, 5}, 1);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("peer 3"), std::string::npos) << e.what();
  }
  try {
    place_frc({{1}, {0, 2}}, 1, false);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("neighbour 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(block_of({{0}, {1, 7}}, 4), std::invalid_argument);
  EXPECT_EQ(block_of({{0}, {1, 7}}, 7), (Block{1, 7}));
}

TEST(CodingNeighbourhoodTest, RolePositionsTakeTheGthMemberOfEveryBlock) {
  EXPECT_EQ(role_positions({{5}, {1, 4}, {6, 9}}), (std::vector<std::vector<int>>{{1, 6}, {4, 9}}));
  // A short last block only fills the first positions.
  EXPECT_EQ(role_positions({{0}, {1, 2, 3}, {4}}),
            (std::vector<std::vector<int>>{{1, 4}, {2}, {3}}));
}

// crc and cyclic_mds: one cyclic block of all neighbours; each member holds its window of the
// sorted block. Peer 0 of the torus is first in each neighbour's block (N(1) = {0 2 5 13},
// N(3) = {0 2 7 15}, N(4) = {0 5 7 8}, N(12) = {0 8 13 15}), so it holds the next 1 (crc,
// s = 1) or 2 (cyclic_mds, s = 1, m = 2) of each; the last member's window wraps.
TEST(CodingNeighbourhoodTest, CyclicSchemesPlaceWindowsOfOneBlock) {
  NeighbourhoodCodeSpec crc;
  crc.scheme = Scheme::kCyclicRepetition;
  crc.stragglers = 1;
  NeighbourhoodCodeSpec ce = crc;
  ce.scheme = Scheme::kCyclicMds;
  ce.sub_blocks = 2;
  EXPECT_EQ(code_blocks(crc, 0, {12, 1, 4, 3}), (std::vector<Block>{{0}, {1, 3, 4, 12}}));
  EXPECT_EQ(member_partitions(crc, {0, 8, 13, 15}, 3), (Block{0, 15}));
  EXPECT_EQ(member_partitions(ce, {0, 8, 13, 15}, 3), (Block{0, 8, 15}));
  EXPECT_EQ(members_needed(crc, 4), 3);
  const Placement crc_placement = place_code(torus4x4(), crc);
  EXPECT_EQ(crc_placement.stored[0], (std::vector<int>{0, 2, 5, 8}));
  EXPECT_EQ(crc_placement.computed[0], crc_placement.stored[0]);
  const Placement ce_placement = place_code(torus4x4(), ce);
  EXPECT_EQ(ce_placement.stored[0], (std::vector<int>{0, 2, 5, 7, 8, 13}));
  // A ring's 2 neighbours cannot hold windows of 3.
  try {
    place_code(ring(8), ce);
    FAIL() << "windows of 3 in blocks of 2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("peer 0 has 2 neighbours"), std::string::npos) << e.what();
  }
}

TEST(CodingNeighbourhoodTest, SchemeNames) {
  EXPECT_EQ(parse_scheme("frc"), Scheme::kFrc);
  EXPECT_EQ(parse_scheme("none"), Scheme::kNone);
  EXPECT_EQ(to_string(Scheme::kFrc), "frc");
  for (Scheme scheme : {Scheme::kMds, Scheme::kCyclicRepetition, Scheme::kCyclicMds}) {
    EXPECT_EQ(parse_scheme(to_string(scheme)), scheme);
  }
  EXPECT_THROW(parse_scheme("cyclic"), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::coding
