// [churn] (docs/simulation.md §9): the schedule from the config's events and a file, in time
// order; a schedule no run can follow is refused with the row and the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/config_parsing.h"
#include "tests/support/temp_dir.h"

namespace fastk::node {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using testing::parse;

const std::string kRing = "[topology]\nkind = \"ring\"\npeers = 6\n";

TEST(ChurnConfig, EventsAndAFileMakeOneScheduleInTimeOrder) {
  const auto dir = testutil::fresh_test_dir("fastk_churn");
  std::ofstream(dir / "churn.csv") << "time_s,peer,event\n2.5,4,leave\n\n9,4,join\n";
  const ExperimentConfig c = parse_config(
      kRing + "[churn]\nevents = [\"3,1,leave\", \"7.5,1,join\"]\nfile = \"churn.csv\"\n",
      "exp.toml", dir);
  ASSERT_EQ(c.churn.schedule.size(), 4u);
  EXPECT_EQ(c.churn.schedule[0].peer, 4);
  EXPECT_EQ(c.churn.schedule[0].at_s, 2.5);
  EXPECT_EQ(c.churn.schedule[1].peer, 1);
  EXPECT_EQ(c.churn.schedule[2].kind, ChurnEvent::Kind::kJoin);
  EXPECT_EQ(c.churn.schedule[3].at_s, 9.0);
  EXPECT_EQ(c.churn.file, (dir / "churn.csv").string());
  EXPECT_TRUE(parse(kRing).churn.schedule.empty());
  // `fastk calibrate`'s reference runs set it aside so (calibrate_command.cc).
  EXPECT_TRUE(
      parse_config(kRing + "[churn]\nevents = [\"3,1,leave\"]\n", "exp.toml", dir, {"churn={}"})
          .churn.schedule.empty());
}

TEST(ChurnConfig, AScheduleNoRunCanFollowIsRefusedWithTheRowAndWhy) {
  const auto churn = [](const std::string& events) {
    return error_of(kRing + "[churn]\nevents = [" + events + "]\n");
  };
  EXPECT_THAT(churn("\"1,2\""), HasSubstr("is not TIME_S,PEER,EVENT"));
  EXPECT_THAT(churn("\"soon,2,leave\""), HasSubstr("time 'soon'"));
  EXPECT_THAT(churn("\"-1,2,leave\""), HasSubstr("time '-1'"));
  EXPECT_THAT(churn("\"1,x,leave\""), HasSubstr("peer 'x'"));
  EXPECT_THAT(churn("\"1,2,crash\""), HasSubstr("event 'crash' is not leave or join"));
  EXPECT_THAT(churn("\"1,9,leave\""), HasSubstr("peer 9 is not a peer of the run (0 to 5)"));
  EXPECT_THAT(churn("\"1,2,join\""), HasSubstr("peer 2 joins at 1"));
  EXPECT_THAT(churn("\"1,2,leave\", \"2,2,leave\""), HasSubstr("peer 2 leaves twice in a row"));
  EXPECT_THAT(churn("\"3,2,leave\", \"3,2,join\""), HasSubstr("must come at later times"));
  EXPECT_THAT(error_of(kRing + "[churn]\nfile = \"/no/such/churn.csv\"\n"),
              HasSubstr("cannot read '/no/such/churn.csv'"));
  // A run that cannot take a peer back (consensus/comeback.h) refuses a join, not a leave.
  const std::string coded = "[coding]\nscheme = \"frc\"\n";
  EXPECT_THAT(error_of(kRing + coded + "[churn]\nevents = [\"1,2,leave\", \"2,2,join\"]\n"),
              HasSubstr("a peer cannot come back in this run"));
  EXPECT_EQ(error_of(kRing + "[churn]\nevents = [\"1,2,leave\"]\n"), "");
}

TEST(ChurnConfig, AFileWithoutItsHeaderOrWithABadRowIsNamed) {
  const auto dir = testutil::fresh_test_dir("fastk_churn");
  std::ofstream(dir / "no_header.csv") << "1,2,leave\n";
  std::ofstream(dir / "bad_row.csv") << "time_s,peer,event\n1,2,leave\n2,2,jion\n";
  const auto error = [&](const std::string& file) {
    try {
      parse_config(kRing + "[churn]\nfile = \"" + file + "\"\n", "exp.toml", dir);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error("no_header.csv"),
              HasSubstr("does not begin with the header time_s,peer,event"));
  EXPECT_THAT(error("bad_row.csv"), HasSubstr("bad_row.csv line 3: event 'jion'"));
}

}  // namespace
}  // namespace fastk::node
