#include "isa/level.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>

#ifndef FASTK_MARCH_NAME
#define FASTK_MARCH_NAME ""
#endif

// The features the binary's own code may use: this file is compiled with the flags of every
// fastk target, so the compiler's macros say what FASTK_MARCH enabled. Data only: the start-up
// check (compiled for x86-64) reads these before anything else runs.
extern "C" {
extern const char* const fastk_isa_build_features[];
extern const int fastk_isa_build_feature_count;
extern const char* const fastk_isa_build_march;
const char* const fastk_isa_build_features[] = {
#ifdef __SSE3__
    "sse3",
#endif
#ifdef __SSSE3__
    "ssse3",
#endif
#ifdef __SSE4_1__
    "sse4.1",
#endif
#ifdef __SSE4_2__
    "sse4.2",
#endif
#ifdef __POPCNT__
    "popcnt",
#endif
#ifdef __AVX__
    "avx",
#endif
#ifdef __AVX2__
    "avx2",
#endif
#ifdef __BMI__
    "bmi",
#endif
#ifdef __BMI2__
    "bmi2",
#endif
#ifdef __F16C__
    "f16c",
#endif
#ifdef __FMA__
    "fma",
#endif
#ifdef __LZCNT__
    "lzcnt",
#endif
#ifdef __MOVBE__
    "movbe",
#endif
#ifdef __AVX512F__
    "avx512f",
#endif
#ifdef __AVX512BW__
    "avx512bw",
#endif
#ifdef __AVX512CD__
    "avx512cd",
#endif
#ifdef __AVX512DQ__
    "avx512dq",
#endif
#ifdef __AVX512VL__
    "avx512vl",
#endif
    "",  // keeps the array non-empty for a plain x86-64 build
};
const int fastk_isa_build_feature_count =
    static_cast<int>(sizeof fastk_isa_build_features / sizeof fastk_isa_build_features[0]) - 1;
const char* const fastk_isa_build_march = FASTK_MARCH_NAME;
}

namespace fastk::isa {

std::string describe(Level level) {
  return std::string(level_name(level)) + " (" + level_extensions(level) + ")";
}

std::optional<Level> parse_level(std::string_view name) {
  for (int i = 0; i < kLevelCount; ++i) {
    if (name == level_name(static_cast<Level>(i))) return static_cast<Level>(i);
  }
  return std::nullopt;
}

Level build_level() { return level_of(fastk_isa_build_features, fastk_isa_build_feature_count); }

std::string build_march() { return fastk_isa_build_march; }

std::vector<std::string> build_features() {
  return {fastk_isa_build_features, fastk_isa_build_features + fastk_isa_build_feature_count};
}

std::vector<Level> kernel_levels() {
  std::vector<Level> levels = {build_level()};
  // Typed: a -march=x86-64-v4 build has no kernel level above its own, and the list is empty.
  const std::initializer_list<Level> built = {
#ifdef FASTK_KERNELS_x86_64_v3
      Level::kX86_64_V3,
#endif
#ifdef FASTK_KERNELS_x86_64_v4
      Level::kX86_64_V4,
#endif
  };
  for (Level kernel : built) {
    if (kernel > levels.front()) levels.push_back(kernel);
  }
  return levels;
}

Level cpu_level() {
  Level level = Level::kX86_64;
  for (int i = 1; i < kLevelCount; ++i) {
    if (cpu_supports(static_cast<Level>(i))) level = static_cast<Level>(i);
  }
  return level;
}

std::vector<std::string> missing_features(Level level) {
  const char* names[32];
  const int missing = isa::missing_features(level, names, 32);
  return {names, names + std::min(missing, 32)};
}

Level choose_kernel_level(const std::vector<Level>& built, Level cpu, const char* override_value) {
  if (override_value == nullptr || *override_value == '\0') {
    Level chosen = built.front();
    for (Level level : built)
      if (level <= cpu) chosen = std::max(chosen, level);
    return chosen;
  }
  std::string names;
  for (Level level : built) names += std::string(names.empty() ? "" : ", ") + level_name(level);
  const std::string asked = std::string(kOverrideVariable) + "=" + override_value;
  const auto level = parse_level(override_value);
  if (!level) {
    throw std::invalid_argument(asked + " is no instruction-set level: this fastk has " + names);
  }
  if (std::find(built.begin(), built.end(), *level) == built.end()) {
    throw std::invalid_argument(asked + ": this fastk has no " + level_name(*level) +
                                " kernels, only " + names);
  }
  if (*level > cpu) {
    throw std::invalid_argument(asked + ": this CPU supports only " + describe(cpu) + "; unset " +
                                kOverrideVariable);
  }
  return *level;
}

Level kernel_level() {
  static const Level chosen =
      choose_kernel_level(kernel_levels(), cpu_level(), std::getenv(kOverrideVariable));
  return chosen;
}

}  // namespace fastk::isa
