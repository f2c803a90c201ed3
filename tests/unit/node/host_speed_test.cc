// What the doctor concludes from the hosts' gradients (node/doctor/host_speed.h): a host where
// the gradient failed would crash, one at kStragglerRatio times the fastest or more is a
// straggler by hardware, and the slowest host sets the compute side of the floor.
#include "node/doctor/host_speed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fastk::node::doctor {
namespace {

using ::testing::HasSubstr;

HostSpeed timed(const std::string& host, double s, const std::string& kernels) {
  HostSpeed h{.host = host, .gradient = {}, .isa = {}};
  h.gradient.measured = true;
  h.gradient.plain_s = s;
  h.isa.kernels = kernels;
  return h;
}

TEST(HostSpeed, AFailedGradientIsACrashNamingTheHostAndWhy) {
  HostSpeed broken{.host = "10.0.0.12", .gradient = {}, .isa = {}};
  broken.gradient.failure =
      "killed by SIGILL: SIGILL at start-up (an instruction this CPU does "
      "not have): ...";
  broken.gradient.crashed = true;
  const auto f = judge_speeds({timed("10.0.0.11", 1e-3, "x86-64-v3"), broken});
  ASSERT_EQ(f.problems.size(), 1u);
  EXPECT_THAT(f.problems[0], HasSubstr("10.0.0.12 would crash: a gradient there, with the fastk "
                                       "it runs, was killed by SIGILL"));
  EXPECT_TRUE(f.notes.empty());
  ASSERT_TRUE(f.slowest.has_value());
  EXPECT_EQ(f.slowest->host, "10.0.0.11");
}

TEST(HostSpeed, AGradientThatFailedWithoutASignalIsNoCrash) {
  HostSpeed no_data{.host = "10.0.0.12", .gradient = {}, .isa = {}};
  no_data.gradient.failure = "exit code 1: cannot read the data set";
  const auto f = judge_speeds({timed("10.0.0.11", 1e-3, "x86-64-v3"), no_data});
  ASSERT_EQ(f.problems.size(), 1u);
  EXPECT_THAT(f.problems[0], HasSubstr("10.0.0.12 cannot time a gradient: its child process "
                                       "exit code 1"));
}

TEST(HostSpeed, AHostAtTheRatioOrSlowerIsAStragglerByHardwareAndNoProblem) {
  const auto f = judge_speeds({timed("a", 1.0e-3, "x86-64-v4"), timed("b", 1.4e-3, "x86-64-v3"),
                               timed("c", 1.5e-3, "x86-64")});
  EXPECT_TRUE(f.problems.empty());
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_THAT(f.notes[0], HasSubstr("c is a straggler by hardware: a gradient takes 1.50 ms there "
                                    "with kernels x86-64, 1.5x the fastest host's (a, 1.00 ms "
                                    "with kernels x86-64-v4)"));
  EXPECT_EQ(f.slowest->host, "c");
}

TEST(HostSpeed, TheHostsFileHoldsTheTimedHostsOnly) {
  HostSpeed skipped{.host = "z", .gradient = {}, .isa = {}};
  const auto j = hosts_json({timed("a", 2e-3, "x86-64-v3"), skipped});
  ASSERT_EQ(j["hosts"].size(), 1u);
  EXPECT_EQ(j["hosts"][0]["host"], "a");
  EXPECT_EQ(j["hosts"][0]["gradient_s"], 2e-3);
}

}  // namespace
}  // namespace fastk::node::doctor

namespace fastk::node::doctor {
namespace {

// A report goes from the agent to the doctor as JSON and comes back whole; an agent of a build
// older than the per-host gradient sends no "isa" and no "gradient", which reads as unknown
// kernels and no gradient (its row says "DIFFERENT" build), not as a malformed report.
TEST(HostReportJson, RoundTripsAndReadsAnOlderAgentsReport) {
  HostReport report;
  report.version = "fastk 0.1.0";
  report.isa = {"x86-64", "x86-64-v3 (AVX2, FMA)", "x86-64-v3 (AVX2, FMA)", ""};
  report.gradient.failure = "killed by SIGILL";
  report.gradient.crashed = true;
  const HostReport back = host_report_from_json(to_json(report));
  EXPECT_EQ(back.isa.kernels, report.isa.kernels);
  EXPECT_TRUE(back.gradient.crashed);
  EXPECT_EQ(back.gradient.failure, "killed by SIGILL");
  nlohmann::json older = to_json(report);
  older.erase("isa");
  older.erase("gradient");
  const HostReport old = host_report_from_json(older);
  EXPECT_EQ(old.isa.kernels, "?");
  EXPECT_FALSE(old.gradient.measured);
  EXPECT_TRUE(old.gradient.failure.empty());
}

}  // namespace
}  // namespace fastk::node::doctor
