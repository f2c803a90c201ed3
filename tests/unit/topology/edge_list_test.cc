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
