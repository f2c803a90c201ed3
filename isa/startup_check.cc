// Runs from .preinit_array: after the shared libraries' initialisers (Debian builds them for
// x86-64) and before the executable's own, so before any code compiled for FASTK_MARCH. This
// file is compiled for x86-64 whatever FASTK_MARCH says (isa/CMakeLists.txt) and calls only
// cpu.cc (likewise compiled) and the C library: no C++ library template, whose one copy in the
// binary might be another translation unit's, compiled for a wider instruction set.
#include "isa/startup_check.h"

#include <unistd.h>

#include <cstdio>

#include "isa/cpu.h"

extern "C" {
extern const char* const fastk_isa_build_features[];  // isa/level.cc: data only
extern const int fastk_isa_build_feature_count;
extern const char* const fastk_isa_build_march;
}

namespace fastk::isa {
namespace {

constexpr int kMaxMissing = 32;

[[noreturn]] void refuse(const char* why, const char** missing, int count, const char* fix) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char text[2048];
  int n =
      std::snprintf(text, sizeof text, "%s%s: %s, and this CPU lacks", kRefusedPrefix, host, why);
  for (int i = 0; i < count && i < kMaxMissing && n < static_cast<int>(sizeof text); ++i) {
    n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%s %s",
                       i == 0 ? "" : ",", missing[i]);
  }
  if (n < static_cast<int>(sizeof text)) {
    n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n),
                       ": it would die of SIGILL (illegal instruction); %s\n", fix);
  }
  if (n > static_cast<int>(sizeof text)) n = static_cast<int>(sizeof text);
  if (write(STDERR_FILENO, text, static_cast<std::size_t>(n)) < 0) {
    // Nothing to do: the exit code says it.
  }
  _exit(kCpuRefusedExitCode);
}

// FASTK_ISA's value in `envp`, or null.
const char* forced_level(char** envp) {
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    const char* p = *e;
    const char* name = "FASTK_ISA=";
    while (*name != 0 && *p == *name) ++p, ++name;
    if (*name == 0) return p;
  }
  return nullptr;
}

void check(int, char**, char** envp) {
  const char* missing[kMaxMissing];
  char why[256];
  int count =
      missing_of(fastk_isa_build_features, fastk_isa_build_feature_count, missing, kMaxMissing);
  if (count > 0) {
    const Level level = level_of(fastk_isa_build_features, fastk_isa_build_feature_count);
    std::snprintf(why, sizeof why, "this fastk was built with -march=%s, for %s (%s)",
                  fastk_isa_build_march, level_name(level), level_extensions(level));
    refuse(why, missing, count,
           "build fastk with the default FASTK_MARCH=x86-64, which runs on every x86-64 CPU and "
           "picks its AVX2 or AVX-512 kernels at run time, and share that build");
  }
  const char* forced = forced_level(envp);
  for (int i = 0; forced != nullptr && i < kLevelCount; ++i) {
    const Level level = static_cast<Level>(i);
    const char *a = forced, *b = level_name(level);
    while (*a != 0 && *a == *b) ++a, ++b;
    if (*a != 0 || *b != 0) continue;
    count = missing_features(level, missing, kMaxMissing);
    if (count == 0) return;
    std::snprintf(why, sizeof why, "FASTK_ISA=%s asks for %s (%s) kernels", forced,
                  level_name(level), level_extensions(level));
    refuse(why, missing, count, "unset FASTK_ISA, and fastk picks the widest kernels it runs");
  }
}

}  // namespace

// The dynamic loader calls every pointer of .preinit_array, in the executable only.
extern "C" __attribute__((section(".preinit_array"),
                          used)) void (*const fastk_isa_startup_check)(int, char**, char**) = check;

}  // namespace fastk::isa
