// Instruction-set levels: names, the level a list of features makes, and the choice of
// kernels (pure logic: the CPU is a parameter).
#include "isa/level.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace fastk::isa {
namespace {

using ::testing::HasSubstr;

TEST(IsaLevel, NamesRoundTrip) {
  for (int i = 0; i < kLevelCount; ++i) {
    const auto level = static_cast<Level>(i);
    EXPECT_EQ(parse_level(level_name(level)), level);
  }
  EXPECT_FALSE(parse_level("avx2").has_value());
  EXPECT_EQ(describe(Level::kX86_64_V4), "x86-64-v4 (AVX-512)");
}

TEST(IsaLevel, AListOfFeaturesMakesTheHighestLevelItCompletes) {
  const char* v3[] = {"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx",  "avx2",
                      "bmi",  "bmi2",  "f16c",   "fma",    "lzcnt",  "movbe"};
  EXPECT_EQ(level_of(v3, 13), Level::kX86_64_V3);
  EXPECT_EQ(level_of(v3, 12), Level::kX86_64_V2);  // movbe missing: not v3
  EXPECT_EQ(level_of(v3, 0), Level::kX86_64);
  const char* avx512_only[] = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"};
  EXPECT_EQ(level_of(avx512_only, 5), Level::kX86_64);  // not without the levels below
}

TEST(IsaLevel, KernelsAreTheWidestBuiltThatTheCpuRuns) {
  const std::vector<Level> built = {Level::kX86_64, Level::kX86_64_V3, Level::kX86_64_V4};
  EXPECT_EQ(choose_kernel_level(built, Level::kX86_64_V4, nullptr), Level::kX86_64_V4);
  EXPECT_EQ(choose_kernel_level(built, Level::kX86_64_V3, nullptr), Level::kX86_64_V3);
  EXPECT_EQ(choose_kernel_level(built, Level::kX86_64_V2, ""), Level::kX86_64);
  EXPECT_EQ(choose_kernel_level({Level::kX86_64_V3}, Level::kX86_64_V4, nullptr),
            Level::kX86_64_V3);  // a native build has only its own
}

TEST(IsaLevel, AnOverrideChoosesABuiltLevelTheCpuRunsAndNothingElse) {
  const std::vector<Level> built = {Level::kX86_64, Level::kX86_64_V3, Level::kX86_64_V4};
  EXPECT_EQ(choose_kernel_level(built, Level::kX86_64_V4, "x86-64"), Level::kX86_64);
  EXPECT_EQ(choose_kernel_level(built, Level::kX86_64_V4, "x86-64-v3"), Level::kX86_64_V3);
  const auto message = [&](Level cpu, const char* value) {
    try {
      choose_kernel_level(built, cpu, value);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(Level::kX86_64_V4, "avx2"),
              HasSubstr("FASTK_ISA=avx2 is no instruction-set level: this fastk has x86-64, "
                        "x86-64-v3, x86-64-v4"));
  EXPECT_THAT(message(Level::kX86_64_V4, "x86-64-v2"),
              HasSubstr("FASTK_ISA=x86-64-v2: this fastk has no x86-64-v2 kernels"));
  EXPECT_THAT(message(Level::kX86_64_V3, "x86-64-v4"),
              HasSubstr("FASTK_ISA=x86-64-v4: this CPU supports only x86-64-v3 (AVX2, FMA)"));
}

TEST(IsaLevel, ThisProcessRunsABuiltLevelThatThisCpuSupports) {
  const auto built = kernel_levels();
  ASSERT_FALSE(built.empty());
  EXPECT_EQ(built.front(), build_level());
  const Level chosen = kernel_level();
  EXPECT_NE(std::find(built.begin(), built.end(), chosen), built.end());
  EXPECT_TRUE(cpu_supports(chosen));
  EXPECT_TRUE(missing_features(chosen).empty());
  EXPECT_LE(chosen, cpu_level());
}

// CPUID as isa/cpu.cc reads it agrees with what the kernel found (/proc/cpuinfo's flags,
// some under other names), feature by feature, for every feature of every level.
TEST(IsaLevel, CpuidAgreesWithProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.insert(w);
    break;
  }
  ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
  const std::pair<const char*, const char*> features[] = {
      {"sse3", "pni"},          {"ssse3", "ssse3"},       {"sse4.1", "sse4_1"},
      {"sse4.2", "sse4_2"},     {"popcnt", "popcnt"},     {"avx", "avx"},
      {"avx2", "avx2"},         {"bmi", "bmi1"},          {"bmi2", "bmi2"},
      {"f16c", "f16c"},         {"fma", "fma"},           {"lzcnt", "abm"},
      {"movbe", "movbe"},       {"avx512f", "avx512f"},   {"avx512bw", "avx512bw"},
      {"avx512cd", "avx512cd"}, {"avx512dq", "avx512dq"}, {"avx512vl", "avx512vl"}};
  for (const auto& [ours, linux_name] : features) {
    const char* lacking[1];
    const bool has = missing_of(&ours, 1, lacking, 1) == 0;
    EXPECT_EQ(has, flags.count(linux_name) == 1)
        << ours << " (/proc/cpuinfo: " << linux_name << ")";
  }
}

}  // namespace
}  // namespace fastk::isa
