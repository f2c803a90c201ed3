// The [coding] table (node/config/coding_table.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "node/config/experiment_config.h"
#include "tests/support/config_parsing.h"

namespace fastk::node {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::error_of;
using testing::parse;

TEST(CodingTable, DefaultsAreUncodedWithOneStragglerPerBlock) {
  const auto& spec = parse("[run]\n").consensus.protocol.coding;
  EXPECT_EQ(spec.scheme, coding::Scheme::kNone);
  EXPECT_EQ(spec.stragglers, 1);
  EXPECT_EQ(spec.deadline_s, 0.0);
  EXPECT_TRUE(spec.rescale);
  EXPECT_TRUE(spec.split_batch);
  EXPECT_FALSE(spec.dynamic_roles);
}

TEST(CodingTable, ReadsEveryKey) {
  const auto& spec = parse(R"(
[coding]
scheme = "frc"
stragglers = 2
deadline_s = 1.5
rescale = false
split_batch = false
dynamic_roles = true
)")
                         .consensus.protocol.coding;
  EXPECT_EQ(spec.scheme, coding::Scheme::kFrc);
  EXPECT_EQ(spec.stragglers, 2);
  EXPECT_EQ(spec.deadline_s, 1.5);
  EXPECT_FALSE(spec.rescale);
  EXPECT_FALSE(spec.split_batch);
  EXPECT_TRUE(spec.dynamic_roles);
}

TEST(CodingTable, MdsReadsSubBlocks) {
  const auto& spec = parse("[coding]\nscheme = \"mds\"\nstragglers = 2\nsub_blocks = 3\n")
                         .consensus.protocol.coding;
  EXPECT_EQ(spec.scheme, coding::Scheme::kMds);
  EXPECT_EQ(spec.stragglers, 2);
  EXPECT_EQ(spec.sub_blocks, 3);
  EXPECT_EQ(coding::block_size(spec), 5);
  EXPECT_EQ(coding::members_needed(spec, 5), 3);
  EXPECT_EQ(coding::members_needed(spec, 2), 2) << "a smaller last block needs all its members";
}

TEST(CodingTable, SubBlocksAndDynamicRolesNameWhatTheyNeed) {
  EXPECT_THAT(error_of("[coding]\nscheme = \"frc\"\nsub_blocks = 2\n"),
              HasSubstr("coding.sub_blocks: only coding.scheme = \"mds\""));
  EXPECT_THAT(error_of("[coding]\nscheme = \"mds\"\ndynamic_roles = true\n"),
              HasSubstr("coding.dynamic_roles: dynamic roles need coding.scheme = \"frc\""));
  EXPECT_THAT(error_of("[coding]\nscheme = \"mds\"\nsub_blocks = 0\n"),
              HasSubstr("coding.sub_blocks"));
  EXPECT_THAT(error_of("[consensus]\nstaleness = 1\n[coding]\nscheme = \"mds\"\n"),
              HasSubstr("consensus.staleness lets older ones count"));
  // C(16, 8) = 12870 ways to pick 8 of 16: too many to choose a code from.
  EXPECT_THAT(error_of("[coding]\nscheme = \"mds\"\nstragglers = 8\nsub_blocks = 8\n"),
              HasSubstr("a block of stragglers + sub_blocks = 16 members"));
}

TEST(CodingTable, UnknownKeySuggestsTheNearestOne) {
  const std::string e = error_of("[coding]\nscheme = \"frc\"\nstraglers = 2\n");
  EXPECT_THAT(e, HasSubstr("coding.straglers"));
  EXPECT_THAT(e, HasSubstr("did you mean 'stragglers'"));
}

TEST(CodingTable, UnknownSchemeNamesTheChoices) {
  const std::string e = error_of("[coding]\nscheme = \"crc\"\n");
  EXPECT_THAT(e, HasSubstr("coding.scheme"));
  EXPECT_THAT(e, HasSubstr("crc"));
  EXPECT_THAT(e, HasSubstr("none, frc or mds"));
}

TEST(CodingTable, OutOfRangeValuesAreErrors) {
  EXPECT_THAT(error_of("[coding]\nstragglers = -1\n"), HasSubstr("coding.stragglers"));
  EXPECT_THAT(error_of("[coding]\ndeadline_s = -0.5\n"), HasSubstr("coding.deadline_s"));
  EXPECT_THAT(error_of("[coding]\nrescale = \"yes\"\n"), HasSubstr("coding.rescale"));
}

// The coded wait rule replaces the backup policy, so a policy other than full is an error,
// and so is adapt-then-combine; neither matters while the scheme is none.
TEST(CodingTable, CodingNeedsPolicyFullAndCombineThenAdapt) {
  const std::string policy = error_of(R"(
[consensus]
policy = "deadline"
[coding]
scheme = "frc"
)");
  EXPECT_THAT(policy, HasSubstr("coding.scheme"));
  EXPECT_THAT(policy, HasSubstr("consensus.policy = \"full\""));

  const std::string order = error_of(R"(
[consensus]
order = "adapt_then_combine"
[coding]
scheme = "frc"
)");
  EXPECT_THAT(order, HasSubstr("coding.scheme"));
  EXPECT_THAT(order, HasSubstr("combine_then_adapt"));

  EXPECT_THAT(
      error_of("[consensus]\norder = \"adapt_then_combine\"\n[coding]\nscheme = \"none\"\n"),
      Not(HasSubstr("coding")));
  EXPECT_THAT(error_of("[consensus]\npolicy = \"static\"\nbackups = 1\n"),
              Not(HasSubstr("coding")));
}

TEST(CodingTable, CodingNeedsAFixedTopologyAndAScheme) {
  const std::string varying = error_of(
      "[topology]\nkind = \"one_peer_exponential\"\npeers = 8\n[coding]\nscheme = \"frc\"\n");
  EXPECT_THAT(varying, HasSubstr("coding.scheme"));
  EXPECT_THAT(varying, HasSubstr("one_peer_exponential"));
  EXPECT_THAT(error_of("[coding]\ndynamic_roles = true\n"), HasSubstr("only apply to a coded run"));
  EXPECT_THAT(error_of("[coding]\ndeadline_s = 2.0\n"), HasSubstr("only apply to a coded run"));
  EXPECT_THAT(error_of("[topology]\nkind = \"one_peer_exponential\"\npeers = 8\n"),
              Not(HasSubstr("coding")));
}

}  // namespace
}  // namespace fastk::node
