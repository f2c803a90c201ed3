// `fastk sim --replay RUN_DIR` (docs/simulation.md §8): real peers record their times, and the
// simulator re-enacts the run on them. With the same protocol code and the record's times the
// replay makes every decision the real peers made and ends with their models, bit for bit;
// then it replays every static number of backups on the same times for the regret. A trace it
// cannot re-enact is refused with what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/run_fastk.h"
#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

using ::testing::HasSubstr;
using testing::run_fastk;

// A real run of 4 adaptive peers on a ring with stragglers, its folder.
std::filesystem::path recorded_run(const std::filesystem::path& dir,
                                   const std::string& consensus_extra = "") {
  TinyExperiment e = tiny_experiment(4, 120, "adaptive");
  e.consensus_extra = consensus_extra;
  e.extra = "[stragglers]\ntransient_probability = 0.2\ntransient_factor = 10\n";
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir, e);
  FastkProcess real({"run", config.string(), "--no-plots", "--set", "run.target_accuracy=0.7"});
  const auto status = real.wait(Seconds(120));
  EXPECT_TRUE(status && status->ok()) << real.output();
  std::filesystem::rename(run_dir(dir), dir / "real");
  return dir / "real";
}

TEST(Replay, ReEnactsARealRunBitForBitAndReplaysEveryStaticPolicy) {
  const auto dir = testutil::fresh_test_dir("fastk_replay");
  const auto real = recorded_run(dir);
  ASSERT_TRUE(std::filesystem::exists(real / "arrivals.csv"));
  const auto r = run_fastk("sim --replay " + real.string() + " --no-plots");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(100.0%)")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("final models identical to the record's: 4 of 4 peers"))
      << r.output;
  EXPECT_THAT(r.output, HasSubstr("static, 0 backups")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("static, 1 backup")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("time to 70.0% accuracy on the record's times")) << r.output;
  const auto replay = read_json(dir / "real-replay" / "replay.json");
  EXPECT_EQ(replay["compared_iterations"], 4 * 120);
  EXPECT_EQ(replay["matching_iterations"], 4 * 120);
  EXPECT_EQ(replay["policies"].size(), 3u);
  EXPECT_TRUE(std::filesystem::exists(dir / "real-replay" / "static-b1" / "evaluation.csv"));

  // A CONFIG given with the record must be the one it ran.
  TinyExperiment other = tiny_experiment(4, 120, "full");
  std::filesystem::create_directories(dir / "other");
  const auto other_config = write_config(dir / "other", other);
  const auto mismatch = run_fastk("sim " + other_config.string() + " --replay " + real.string());
  EXPECT_NE(mismatch.exit_code, 0);
  EXPECT_THAT(mismatch.output, HasSubstr("the trace is of another config")) << mismatch.output;
  EXPECT_THAT(mismatch.output, HasSubstr("consensus.policy")) << mismatch.output;
}

// Adapt then combine sends each model after its gradient, not before: the replay sends it then
// too, and re-enacts the run as exactly.
TEST(Replay, ReEnactsAnAdaptThenCombineRun) {
  const auto dir = testutil::fresh_test_dir("fastk_replay");
  const auto real = recorded_run(dir, "order = \"adapt_then_combine\"\n");
  const auto r = run_fastk("sim --replay " + real.string() + " --no-plots --no-static");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(100.0%)")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("final models identical to the record's: 4 of 4 peers"))
      << r.output;
}

// Rewrites `file` in `run`, keeping the lines `keep` says yes to.
void filter_lines(const std::filesystem::path& file,
                  const std::function<bool(const std::string&)>& keep) {
  std::ifstream in(file);
  std::string text, line;
  while (std::getline(in, line)) {
    if (keep(line)) text += line + "\n";
  }
  in.close();
  std::ofstream(file) << text;
}

TEST(Replay, RefusesATraceItCannotReEnactAndSaysWhy) {
  const auto dir = testutil::fresh_test_dir("fastk_replay");
  const auto real = recorded_run(dir);
  const auto copy = [&](const std::string& name) {
    std::filesystem::copy(real, dir / name, std::filesystem::copy_options::recursive);
    return dir / name;
  };
  const auto refused = [](const std::filesystem::path& run) {
    const auto r = run_fastk("sim --replay " + run.string() + " --no-plots");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, ::testing::Not(HasSubstr("outputs:")));
    return r.output;
  };
  // Cut short: peer 2's last iterations are missing.
  const auto cut = copy("cut");
  filter_lines(cut / "iterations.csv", [](const std::string& l) {
    return !(l.starts_with("2,") && std::stoi(l.substr(2)) >= 100);
  });
  EXPECT_THAT(refused(cut), HasSubstr("the trace is cut short: peer 2 ran 100 of 120 iterations"));
  // Recorded before replays (no arrivals.csv).
  const auto old = copy("old");
  std::filesystem::remove(old / "arrivals.csv");
  EXPECT_THAT(refused(old), HasSubstr("no arrivals.csv"));
  // A row that is not numbers, and a message from a peer that is no neighbour.
  const auto garbled = copy("garbled");
  std::ofstream(garbled / "arrivals.csv", std::ios::app) << "1,5,5,zero,0.5,0\n";
  EXPECT_THAT(refused(garbled), HasSubstr("arrivals.csv line"));
  const auto foreign = copy("foreign");
  std::ofstream(foreign / "arrivals.csv", std::ios::app) << "0,5,5,2,0.5,0\n";
  EXPECT_THAT(refused(foreign), HasSubstr("took a message from 2, not its neighbour"));
  // A simulation's folder has no real times to replay.
  const auto config = dir / "exp.toml";
  ASSERT_EQ(
      run_fastk("sim " + config.string() + " --quiet --no-plots -o " + (dir / "simulated").string())
          .exit_code,
      0);
  EXPECT_THAT(refused(dir / "simulated"), HasSubstr("not a real run's folder"));
}

}  // namespace
}  // namespace fastk::systest
