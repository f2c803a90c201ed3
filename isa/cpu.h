// What this CPU can execute, by the x86-64 micro-architecture levels of the x86-64 psABI
// (x86-64, x86-64-v2, -v3, -v4) and the features each adds. This file's code is compiled for
// the x86-64 baseline whatever FASTK_MARCH says (isa/CMakeLists.txt): the start-up check
// (startup_check.cc) calls it before anything else of the program runs, on CPUs that may lack
// every extension. It is plain C++ without library templates for the same reason: a template
// instantiated here would be one copy among those of other translation units, and the linker
// might keep a copy compiled for a wider instruction set.
#pragma once

namespace fastk::isa {

// In order: each level includes the one below.
enum class Level : int { kX86_64 = 0, kX86_64_V2 = 1, kX86_64_V3 = 2, kX86_64_V4 = 3 };
inline constexpr int kLevelCount = 4;

const char* level_name(Level level);        // "x86-64-v4"
const char* level_extensions(Level level);  // "AVX-512", what a reader knows it by

// Whether this CPU (and its operating system) supports every feature of `level`.
bool cpu_supports(Level level);

// The features of `level` and the levels below it that this CPU lacks, by the names
// /proc/cpuinfo and GCC's __builtin_cpu_supports use ("avx512f", "avx2", "sse4.2"): writes at
// most `capacity` of them to `names` and returns how many it lacks.
int missing_features(Level level, const char** names, int capacity);

// The same for a list of feature names (`count` of them; names this file does not know count
// as present: the check covers the levels' features only).
int missing_of(const char* const* features, int count, const char** names, int capacity);

// The highest level whose features are all among `features`.
Level level_of(const char* const* features, int count);

}  // namespace fastk::isa
