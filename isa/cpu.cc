#include "isa/cpu.h"

namespace fastk::isa {
namespace {

// Where CPUID reports a feature: leaf 1 ECX, leaf 7 (sub-leaf 0) EBX, leaf 0x80000001 ECX.
enum class Register : int { kLeaf1Ecx, kLeaf7Ebx, kExtendedEcx };
// The register state the operating system must save for the feature to work (XCR0): without
// it, AVX or AVX-512 instructions fault as unknown ones.
enum class State : int { kNone, kYmm, kZmm };

struct Feature {
  const char* name;
  Level level;
  Register where;
  int bit;
  State state;
};

// The features each level adds (x86-64 psABI, "Micro-architecture levels"), read with CPUID
// here rather than __builtin_cpu_supports, whose level names older compilers (clang 14, the
// fuzz build's) do not know. cx16 and lahf_lm of x86-64-v2 are not checked (every CPU with
// SSE4.2 has them).
const Feature kFeatures[] = {
    {"sse3", Level::kX86_64_V2, Register::kLeaf1Ecx, 0, State::kNone},
    {"ssse3", Level::kX86_64_V2, Register::kLeaf1Ecx, 9, State::kNone},
    {"sse4.1", Level::kX86_64_V2, Register::kLeaf1Ecx, 19, State::kNone},
    {"sse4.2", Level::kX86_64_V2, Register::kLeaf1Ecx, 20, State::kNone},
    {"popcnt", Level::kX86_64_V2, Register::kLeaf1Ecx, 23, State::kNone},
    {"avx", Level::kX86_64_V3, Register::kLeaf1Ecx, 28, State::kYmm},
    {"avx2", Level::kX86_64_V3, Register::kLeaf7Ebx, 5, State::kYmm},
    {"bmi", Level::kX86_64_V3, Register::kLeaf7Ebx, 3, State::kNone},
    {"bmi2", Level::kX86_64_V3, Register::kLeaf7Ebx, 8, State::kNone},
    {"f16c", Level::kX86_64_V3, Register::kLeaf1Ecx, 29, State::kYmm},
    {"fma", Level::kX86_64_V3, Register::kLeaf1Ecx, 12, State::kYmm},
    {"lzcnt", Level::kX86_64_V3, Register::kExtendedEcx, 5, State::kNone},
    {"movbe", Level::kX86_64_V3, Register::kLeaf1Ecx, 22, State::kNone},
    {"avx512f", Level::kX86_64_V4, Register::kLeaf7Ebx, 16, State::kZmm},
    {"avx512bw", Level::kX86_64_V4, Register::kLeaf7Ebx, 30, State::kZmm},
    {"avx512cd", Level::kX86_64_V4, Register::kLeaf7Ebx, 28, State::kZmm},
    {"avx512dq", Level::kX86_64_V4, Register::kLeaf7Ebx, 17, State::kZmm},
    {"avx512vl", Level::kX86_64_V4, Register::kLeaf7Ebx, 31, State::kZmm},
};

struct CpuidResult {
  unsigned eax, ebx, ecx, edx;
};

CpuidResult cpuid(unsigned leaf, unsigned subleaf) {
  CpuidResult r{};
  asm volatile("cpuid"
               : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
               : "a"(leaf), "c"(subleaf));
  return r;
}

// What CPUID and XCR0 say, read once per question (a few times at start-up: no cache, so
// nothing here needs an initialiser).
struct CpuBits {
  unsigned leaf1_ecx = 0, leaf7_ebx = 0, extended_ecx = 0;
  bool ymm = false, zmm = false;  // the OS saves the AVX / AVX-512 registers
};

CpuBits read_cpu() {
  CpuBits bits;
  const unsigned max_leaf = cpuid(0, 0).eax;
  if (max_leaf >= 1) bits.leaf1_ecx = cpuid(1, 0).ecx;
  if (max_leaf >= 7) bits.leaf7_ebx = cpuid(7, 0).ebx;
  if (cpuid(0x80000000u, 0).eax >= 0x80000001u) bits.extended_ecx = cpuid(0x80000001u, 0).ecx;
  constexpr unsigned kOsxsave = 1u << 27;
  if (bits.leaf1_ecx & kOsxsave) {
    unsigned xcr0 = 0, high = 0;
    asm volatile("xgetbv" : "=a"(xcr0), "=d"(high) : "c"(0));
    bits.ymm = (xcr0 & 0x6u) == 0x6u;    // SSE and AVX state
    bits.zmm = (xcr0 & 0xe6u) == 0xe6u;  // and opmask, ZMM 0-15 high halves, ZMM 16-31
  }
  return bits;
}

bool present(const Feature& f, const CpuBits& cpu) {
  unsigned reg = 0;
  switch (f.where) {
    case Register::kLeaf1Ecx:
      reg = cpu.leaf1_ecx;
      break;
    case Register::kLeaf7Ebx:
      reg = cpu.leaf7_ebx;
      break;
    case Register::kExtendedEcx:
      reg = cpu.extended_ecx;
      break;
  }
  bool state = true;
  switch (f.state) {
    case State::kNone:
      break;
    case State::kYmm:
      state = cpu.ymm;
      break;
    case State::kZmm:
      state = cpu.zmm;
      break;
  }
  return state && ((reg >> f.bit) & 1u) != 0;
}

bool same(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

const Feature* find(const char* name) {
  for (const Feature& f : kFeatures)
    if (same(f.name, name)) return &f;
  return nullptr;
}

}  // namespace

const char* level_name(Level level) {
  switch (level) {
    case Level::kX86_64:
      return "x86-64";
    case Level::kX86_64_V2:
      return "x86-64-v2";
    case Level::kX86_64_V3:
      return "x86-64-v3";
    case Level::kX86_64_V4:
      return "x86-64-v4";
  }
  return "?";
}

const char* level_extensions(Level level) {
  switch (level) {
    case Level::kX86_64:
      return "SSE2";
    case Level::kX86_64_V2:
      return "SSE4.2";
    case Level::kX86_64_V3:
      return "AVX2, FMA";
    case Level::kX86_64_V4:
      return "AVX-512";
  }
  return "?";
}

bool cpu_supports(Level level) {
  const char* none[1];
  return missing_features(level, none, 0) == 0;
}

int missing_features(Level level, const char** names, int capacity) {
  const CpuBits cpu = read_cpu();
  int missing = 0;
  for (const Feature& f : kFeatures) {
    if (static_cast<int>(f.level) > static_cast<int>(level) || present(f, cpu)) continue;
    if (missing < capacity) names[missing] = f.name;
    ++missing;
  }
  return missing;
}

}  // namespace fastk::isa

namespace fastk::isa {

int missing_of(const char* const* features, int count, const char** names, int capacity) {
  const CpuBits cpu = read_cpu();
  int missing = 0;
  for (int i = 0; i < count; ++i) {
    const Feature* f = find(features[i]);
    if (f == nullptr || present(*f, cpu)) continue;
    if (missing < capacity) names[missing] = f->name;
    ++missing;
  }
  return missing;
}

Level level_of(const char* const* features, int count) {
  int level = kLevelCount - 1;
  for (const Feature& f : kFeatures) {
    bool listed = false;
    for (int i = 0; i < count && !listed; ++i) listed = same(features[i], f.name);
    if (!listed && static_cast<int>(f.level) <= level) level = static_cast<int>(f.level) - 1;
  }
  return static_cast<Level>(level);
}

}  // namespace fastk::isa
