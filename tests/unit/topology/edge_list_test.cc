#include "topology/edge_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace fastk::topology {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::string& text, std::optional<int> peers = std::nullopt) {
  std::istringstream in(text);
  try {
    parse_edge_list(in, "edges.txt", peers);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(EdgeList, CommentsAndBlankLinesAreIgnored) {
  std::istringstream in("# a triangle\n\n0 1\n1 2   # second\n  2 0\n\t\n");
  Graph g = parse_edge_list(in, "edges.txt");
  EXPECT_EQ(g.size(), 3);
  EXPECT_EQ(g.num_edges(), 3);
}

TEST(EdgeList, PeerCountMayBeGiven) {
  std::istringstream in("0 1\n");
  EXPECT_THROW(parse_edge_list(in, "edges.txt", 3), std::invalid_argument);  // peer 2 isolated
}

TEST(EdgeList, BadLinesAreReportedWithTheirNumber) {
  EXPECT_THAT(error_of("0 1\n# ok\n1 x\n"), HasSubstr("edges.txt:3: expected two peer ids"));
  EXPECT_THAT(error_of("0 1\n1 2 3\n"), HasSubstr("edges.txt:2: expected two peer ids"));
  EXPECT_THAT(error_of("0 1\n1 -2\n"), HasSubstr("edges.txt:2: peer ids must be in"));
  EXPECT_THAT(error_of("0 1\n1 1\n"), HasSubstr("edges.txt:2: self loop"));
  EXPECT_THAT(error_of("0 1\n1 5\n", 3), HasSubstr("edges.txt:2: peer id out of range 0..2"));
  EXPECT_THAT(error_of("0 1\n1 0\n"), HasSubstr("edges.txt: duplicate edge 0-1"));
  EXPECT_THAT(error_of("0 1\n2 3\n"), HasSubstr("edges.txt: graph is disconnected"));
  EXPECT_THAT(error_of("# nothing\n"), HasSubstr("no edges"));
}

// decentralizepy's .edges files: the node count alone on the first line, then each
// undirected edge once from each end (Graph.write_graph_to_file writes every node's set of
// neighbours).
TEST(EdgeList, ADecentralizepyFileGivesTheNodeCountOnItsFirstLine) {
  std::istringstream ring(
      "# written by decentralizepy\n4\n0 1\n0 3\n1 0\n1 2\n2 1\n2 3\n3 2\n3 0\n");
  const Graph g = parse_edge_list(ring, "ring.edges");
  EXPECT_EQ(g.size(), 4);
  EXPECT_EQ(g.num_edges(), 4);
  EXPECT_TRUE(g.has_edge(3, 0));
  // The count, not the largest id, says how many peers there are: node 2 has no edge.
  EXPECT_THAT(error_of("3\n0 1\n"), HasSubstr("edges.txt: graph is disconnected"));
  std::istringstream given("3\n0 1\n1 2\n");
  EXPECT_EQ(parse_edge_list(given, "edges.txt", 3).size(), 3);
  // As arcs, the pairs stay as written.
  std::istringstream arcs("3\n0 1\n1 2\n2 0\n");
  const EdgePairs pairs = parse_edge_pairs(arcs, "edges.txt");
  EXPECT_EQ(pairs.peers, 3);
  EXPECT_TRUE(pairs.counted);
  EXPECT_EQ(pairs.pairs.size(), 3u);
}

TEST(EdgeList, EdgesBeyondTheDeclaredCountAndBadCountsAreNamed) {
  EXPECT_THAT(error_of("3\n0 1\n1 3\n"),
              HasSubstr("edges.txt:3: peer id out of range 0..2 in '1 3' (the first line "
                        "declares 3 nodes)"));
  EXPECT_THAT(error_of("4\n0 1\n1 2\n2 3\n", 6),
              HasSubstr("edges.txt:1: the file declares 4 nodes on its first line, but 6 peers "
                        "were asked for (topology.peers)"));
  EXPECT_THAT(error_of("0\n"), HasSubstr("edges.txt:1: a node count must be in 1..1000000"));
  EXPECT_THAT(error_of("-3\n0 1\n"), HasSubstr("edges.txt:1: a node count must be in"));
  // Only the first line may be a count.
  EXPECT_THAT(error_of("3\n0 1\n2\n"), HasSubstr("edges.txt:3: expected two peer ids"));
  // A plain file still refuses a repeated edge: there it is a mistake.
  EXPECT_THAT(error_of("0 1\n1 0\n"), HasSubstr("duplicate edge 0-1"));
}

TEST(EdgeList, BinaryGarbageIsShownPrintableAndShort) {
  std::string garbage = "0 1\n";
  for (int i = 0; i < 200; ++i) garbage += static_cast<char>((i * 37) % 256 ? (i * 37) % 256 : 1);
  const std::string e = error_of(garbage);
  EXPECT_THAT(e, HasSubstr("edges.txt:2: expected two peer ids"));
  EXPECT_THAT(e, HasSubstr("...'"));
  EXPECT_LT(e.size(), 160u);
  for (char c : e) EXPECT_TRUE(c >= 32 && c < 127) << "unprintable byte " << int(c);
}

TEST(EdgeList, MissingFileIsAClearError) {
  try {
    read_edge_list("/nonexistent/edges.txt");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot open edge-list file '/nonexistent/edges.txt'"));
  }
}

}  // namespace
}  // namespace fastk::topology
