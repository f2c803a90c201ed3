#include "node/config/sweep_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fastk::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SweepPlan, ValuesSplitAtCommasOutsideBracketsAndQuotes) {
  const Variation v = parse_variation("model.hidden=[64],[128,64],\"a,b\"");
  EXPECT_EQ(v.key, "model.hidden");
  EXPECT_THAT(v.values, ElementsAre("[64]", "[128,64]", "\"a,b\""));
}

TEST(SweepPlan, EveryCombinationWithTheLastKeyFastestAndShellSafeFolders) {
  const auto points = sweep_points({parse_variation("consensus.policy=full,static"),
                                    parse_variation("model.hidden=[64],[128,64]")});
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].folder, "1_policy-full_hidden-64");
  EXPECT_EQ(points[1].folder, "2_policy-full_hidden-128_64");
  EXPECT_EQ(points[2].folder, "3_policy-static_hidden-64");
  EXPECT_THAT(points[3].overrides(),
              ElementsAre("consensus.policy=static", "model.hidden=[128,64]"));
  // Ten or more runs: numbers are padded, so folders sort as they ran.
  const auto many = sweep_points({parse_variation("run.seed=1,2,3,4,5,6,7,8,9,10")});
  EXPECT_EQ(many.front().folder, "01_seed-1");
  EXPECT_EQ(many.back().folder, "10_seed-10");
}

TEST(SweepPlan, MistakesAreNamed) {
  const auto error = [](const std::string& text) {
    try {
      parse_variation(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error("run.seed"), HasSubstr("expected TABLE.KEY=VALUE1,VALUE2"));
  EXPECT_THAT(error("seed=1,2"), HasSubstr("the key must be TABLE.KEY"));
  EXPECT_THAT(error("run.seed=1,,2"), HasSubstr("an empty value"));
  EXPECT_THAT(error("run.seed=1,2,1"), HasSubstr("1 is given twice"));
  EXPECT_THROW(sweep_points({}), std::invalid_argument);
  EXPECT_THROW(sweep_points({parse_variation("run.seed=1"), parse_variation("run.seed=2")}),
               std::invalid_argument);
}

}  // namespace
}  // namespace fastk::node
