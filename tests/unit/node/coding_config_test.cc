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
  const std::string e = error_of("[coding]\nscheme = \"cyclic\"\n");
  EXPECT_THAT(e, HasSubstr("coding.scheme"));
  EXPECT_THAT(e, HasSubstr("\"cyclic\""));
  EXPECT_THAT(e, HasSubstr("none, frc, mds, crc or cyclic_mds"));
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

// crc and cyclic_mds: refused with staleness and dynamic roles as mds is, sub_blocks only for
// cyclic_mds, and a graph whose peers cannot hold a window is named by the first such peer.
TEST(CodingTable, CyclicSchemesAndWhatTheyNeed) {
  const auto& ce = parse(
                       "[topology]\nkind = \"torus\"\npeers = 16\n[coding]\nscheme = "
                       "\"cyclic_mds\"\nsub_blocks = 3\n")
                       .consensus.protocol.coding;
  EXPECT_EQ(ce.scheme, coding::Scheme::kCyclicMds);
  EXPECT_EQ(ce.sub_blocks, 3);
  EXPECT_THAT(error_of("[coding]\nscheme = \"crc\"\nsub_blocks = 2\n"),
              HasSubstr("only coding.scheme = \"mds\" or \"cyclic_mds\" cuts messages"));
  EXPECT_THAT(error_of("[consensus]\nstaleness = 1\n[coding]\nscheme = \"crc\"\n"),
              HasSubstr("coding.scheme = \"crc\" decodes a block from shares of one iteration"));
  EXPECT_THAT(error_of("[coding]\nscheme = \"cyclic_mds\"\ndynamic_roles = true\n"),
              HasSubstr("dynamic roles need coding.scheme = \"frc\""));
  const std::string small =
      error_of("[topology]\nkind = \"ring\"\npeers = 8\n[coding]\nscheme = \"cyclic_mds\"\n");
  EXPECT_THAT(small, HasSubstr("coding.stragglers"));
  EXPECT_THAT(small, HasSubstr("peer 0 has 2 neighbours, fewer than the 3 partitions"));
  EXPECT_THAT(error_of("[topology]\nkind = \"ring\"\npeers = 8\n[coding]\nscheme = \"crc\"\n"),
              Not(HasSubstr("coding")));
  // 20 neighbours (complete graph of 21) losing any 5: C(20, 5) = 15504 codes' arrival sets.
  EXPECT_THAT(error_of("[topology]\nkind = \"complete\"\npeers = 21\n[coding]\nscheme = "
                       "\"cyclic_mds\"\nstragglers = 5\nsub_blocks = 1\n"),
              HasSubstr("15504 ways to lose 5 of its 20 neighbours"));
}

}  // namespace
}  // namespace fastk::node
