#include "topology/mixing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "topology/families.h"

namespace fastk::topology {
namespace {

using ::testing::HasSubstr;

TEST(Mixing, MetropolisHastingsOnAStar) {
  Graph g = star(4);  // hub degree 3, leaves degree 1
  MixingMatrix w = mixing_matrix(g, WeightRule::kMetropolisHastings);
  EXPECT_DOUBLE_EQ(w.coeff(0, 1), 0.25);
  EXPECT_DOUBLE_EQ(w.coeff(0, 0), 0.25);
  EXPECT_DOUBLE_EQ(w.coeff(1, 1), 0.75);
  EXPECT_DOUBLE_EQ(w.coeff(1, 2), 0.0);
  MixingCheck c = check_mixing(w, g);
  EXPECT_TRUE(c.usable());
  EXPECT_TRUE(c.symmetric);
  EXPECT_TRUE(c.column_stochastic);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Mixing, MaxDegreeUsesTheLargestDegree) {
  Graph g = star(5);
  MixingMatrix w = mixing_matrix(g, WeightRule::kMaxDegree);
  EXPECT_DOUBLE_EQ(w.coeff(2, 0), 0.2);
  EXPECT_DOUBLE_EQ(w.coeff(2, 2), 0.8);
  EXPECT_TRUE(check_mixing(w, g).symmetric);
}

TEST(Mixing, UniformIsNotSymmetricOnIrregularGraphsAndSaysSo) {
  Graph g = star(4);
  MixingMatrix w = mixing_matrix(g, WeightRule::kUniform);
  EXPECT_DOUBLE_EQ(w.coeff(0, 1), 0.25);
  EXPECT_DOUBLE_EQ(w.coeff(1, 0), 0.5);
  MixingCheck c = check_mixing(w, g);
  EXPECT_TRUE(c.usable());
  EXPECT_TRUE(c.row_stochastic);
  EXPECT_FALSE(c.symmetric);
  EXPECT_FALSE(c.column_stochastic);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_THAT(c.warnings[0], HasSubstr("not column-stochastic (column 0 sums to 1.75, not 1)"));
  // On a regular graph uniform weights are symmetric.
  EXPECT_TRUE(check_mixing(mixing_matrix(ring(6), WeightRule::kUniform), ring(6)).symmetric);
}

// A doubly stochastic matrix that is not symmetric (a cyclic shift mixed half-half with
// self, the one-peer exponential's W) keeps the plain mean: no warning.
TEST(Mixing, DoublyStochasticWithoutSymmetryIsNoWarning) {
  Graph g = ring(4);
  Eigen::MatrixXd w(4, 4);
  w << 0.5, 0, 0, 0.5,  //
      0.5, 0.5, 0, 0,   //
      0, 0.5, 0.5, 0,   //
      0, 0, 0.5, 0.5;
  MixingCheck c = check_mixing(w.sparseView(), g);
  EXPECT_TRUE(c.usable());
  EXPECT_FALSE(c.symmetric);
  EXPECT_TRUE(c.row_stochastic);
  EXPECT_TRUE(c.column_stochastic);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
}

TEST(Mixing, CheckReportsEveryKindOfError) {
  Graph g = path(3);
  Eigen::MatrixXd w(3, 3);
  w << 0.5, 0.5, 0.0,  //
      0.6, 0.6, -0.2,  // negative, still sums to 1
      0.1, 0.4, 0.4;   // weight on non-edge (2, 0); sums to 0.9
  MixingCheck c = check_mixing(w.sparseView(), g);
  EXPECT_FALSE(c.usable());
  EXPECT_FALSE(c.nonnegative);
  EXPECT_FALSE(c.respects_graph);
  EXPECT_FALSE(c.row_stochastic);
  std::string all;
  for (const auto& e : c.errors) all += e + "\n";
  EXPECT_THAT(all, HasSubstr("row 2 sums to 0.9"));
  EXPECT_THAT(all, HasSubstr("(1, 2) is negative"));
  EXPECT_THAT(all, HasSubstr("are not neighbours"));
  EXPECT_THAT(check_mixing(Eigen::MatrixXd::Identity(2, 2).sparseView(), g).errors[0],
              HasSubstr("2x2"));
}

TEST(Mixing, ParsesAMatrixFileWithComments) {
  std::istringstream in("# W for a path of 2\n0.5 0.5\n\n0.5 0.5  # row 1\n");
  MixingMatrix w = parse_weight_matrix(in, "w.txt", 2);
  EXPECT_DOUBLE_EQ(w.coeff(1, 0), 0.5);
}

TEST(Mixing, MalformedMatrixFilesNameTheLine) {
  auto error = [](const std::string& text, int n) {
    std::istringstream in(text);
    try {
      parse_weight_matrix(in, "w.txt", n);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error("1 0\n0 x\n", 2), HasSubstr("w.txt:2: 'x' is not a finite number"));
  EXPECT_THAT(error("1 0\n0\n", 2), HasSubstr("w.txt:2: expected 2 numbers"));
  EXPECT_THAT(error("1 0 0\n0 1\n", 2), HasSubstr("w.txt:1: expected 2 numbers"));
  EXPECT_THAT(error("1 0\n", 2), HasSubstr("expected 2 rows, found 1"));
  EXPECT_THAT(error("1 0\n0 1\n0 1\n", 2), HasSubstr("w.txt:3: more than 2 rows"));
  EXPECT_THAT(error("1 0\n0 nan\n", 2), HasSubstr("not a finite number"));
}

TEST(Mixing, WeightRuleNames) {
  EXPECT_EQ(parse_weight_rule("max_degree"), WeightRule::kMaxDegree);
  EXPECT_EQ(to_string(WeightRule::kUniform), "uniform");
  EXPECT_THROW(parse_weight_rule("metropolis"), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::topology
