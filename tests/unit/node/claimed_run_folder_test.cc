// The folder a command claims: never one that holds another run's files.
#include "node/launch/claimed_run_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace fastk::node {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ClaimedRunFolder, TheDefaultFolderIsTakenWhenNew) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  std::ostringstream notes;
  {
    ClaimedRunFolder claim({}, dir / "runs" / "a", notes);
    EXPECT_EQ(claim.path(), fs::absolute(dir / "runs" / "a"));
    EXPECT_TRUE(fs::is_directory(claim.path()));
    claim.keep();
  }
  EXPECT_TRUE(fs::is_directory(dir / "runs" / "a"));
  EXPECT_EQ(notes.str(), "");
}

TEST(ClaimedRunFolder, ATakenDefaultMovesToTheFirstFreeNumberAndSaysSo) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  for (const char* taken : {"a", "a-2"}) {
    fs::create_directories(dir / taken);
    std::ofstream(dir / taken / "summary.json") << "{}";
  }
  fs::create_directories(dir / "a-4");  // not reached: a-3 is free
  std::ostringstream notes;
  ClaimedRunFolder claim({}, dir / "a", notes);
  EXPECT_EQ(claim.path(), fs::absolute(dir / "a-3"));
  EXPECT_THAT(notes.str(), HasSubstr((dir / "a").string() +
                                     " holds an earlier run: this one "
                                     "writes " +
                                     (dir / "a").string() + "-3"));
  EXPECT_EQ(std::ifstream(dir / "a" / "summary.json").get(), '{');  // untouched
}

TEST(ClaimedRunFolder, AnEmptyOrLockOnlyDefaultIsReused) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  fs::create_directories(dir / "a");
  std::ofstream(dir / "a" / ".lock");  // what a launch that failed at once may leave
  std::ostringstream notes;
  ClaimedRunFolder claim({}, dir / "a", notes);
  EXPECT_EQ(claim.path(), fs::absolute(dir / "a"));
  EXPECT_EQ(notes.str(), "");
}

TEST(ClaimedRunFolder, AnExplicitFolderThatHoldsFilesIsRefusedByName) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "evaluation.csv") << "time_s\n";
  std::ostringstream notes;
  try {
    ClaimedRunFolder claim(dir / "out", dir / "a", notes);
    FAIL() << "claimed " << claim.path();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--output " + (dir / "out").string() + " already holds files"));
  }
  EXPECT_TRUE(fs::exists(dir / "out" / "evaluation.csv"));
  EXPECT_FALSE(fs::exists(dir / "a"));
}

TEST(ClaimedRunFolder, AFolderMadeHereGoesUnlessKeptOneThatExistedStays) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  std::ostringstream notes;
  { ClaimedRunFolder failed(dir / "new", dir / "a", notes); }
  EXPECT_FALSE(fs::exists(dir / "new"));
  fs::create_directories(dir / "given");  // empty: the user made it for this run
  { ClaimedRunFolder failed(dir / "given", dir / "a", notes); }
  EXPECT_TRUE(fs::is_directory(dir / "given"));
}

TEST(ClaimedRunFolder, AFolderInUseIsRefused) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  std::ostringstream notes;
  ClaimedRunFolder first(dir / "out", dir / "a", notes);
  EXPECT_THROW(ClaimedRunFolder(dir / "out", dir / "a", notes), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(dir / "out"));  // the second claim did not remove it
}

// A default folder that is still empty while another command starts in it (fastk calibrate
// measures for seconds before writing) is passed over like a full one.
TEST(ClaimedRunFolder, ADefaultFolderInUseIsPassedOver) {
  const fs::path dir = testutil::fresh_test_dir("fastk_claim");
  std::ostringstream notes;
  ClaimedRunFolder first({}, dir / "a", notes);
  ClaimedRunFolder second({}, dir / "a", notes);
  EXPECT_EQ(first.path(), fs::absolute(dir / "a"));
  EXPECT_EQ(second.path(), fs::absolute(dir / "a-2"));
}

}  // namespace
}  // namespace fastk::node
