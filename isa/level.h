// Which instruction sets this binary's code needs, and which kernels this process runs.
//
// The binary's own code is compiled for FASTK_MARCH (default x86-64: every x86-64 CPU). The hot
// kernels (a model's gradient, the mix) are also compiled for each level of FASTK_KERNELS above
// it (default x86-64-v3 and x86-64-v4) into objects whose symbols are all private but their
// entry points (cmake/FastkKernels.cmake, docs/build.md §1), and kernel_level() picks, once per
// process, the widest this CPU runs. The start-up check (startup_check.cc) refuses, before
// anything else runs, a binary whose own code needs more than the CPU has.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/cpu.h"

namespace fastk::isa {

// Set to a level name, it chooses the kernels instead (for comparisons and tests); a level
// the CPU lacks is refused at start-up, like a binary built for one.
inline constexpr const char* kOverrideVariable = "FASTK_ISA";

// "x86-64-v4 (AVX-512)"
std::string describe(Level level);
std::optional<Level> parse_level(std::string_view name);

// What the binary's own code needs: the level of FASTK_MARCH (native: the highest level whose
// features the build machine's -march enabled), and the -march it was built with.
Level build_level();
std::string build_march();
// The features the binary's own code may use, beyond x86-64 (those the start-up check checks).
std::vector<std::string> build_features();

// The levels this binary has kernels for: build_level() first, then those above it.
std::vector<Level> kernel_levels();
// The widest level this CPU supports.
Level cpu_level();
// The features of `level` (and below) this CPU lacks.
std::vector<std::string> missing_features(Level level);

// The kernels this process runs: the value of kOverrideVariable when set, else the widest of
// `built` that `cpu` supports. Throws std::invalid_argument for an override that is no level
// name, not built in, or above `cpu`, naming what is wrong.
Level choose_kernel_level(const std::vector<Level>& built, Level cpu, const char* override_value);
// choose_kernel_level for this binary and CPU, once per process.
Level kernel_level();

}  // namespace fastk::isa
