// Kernels compiled once per instruction-set level and chosen at run time (isa/level.h). A
// kernel source (listed in its library's fastk_add_kernels, cmake/FastkKernels.cmake) is
// compiled for the library itself (FASTK_KERNEL_LEVEL base), and once per level of
// FASTK_KERNELS with FASTK_KERNEL_LEVEL=x86_64_v3 or x86_64_v4 into an object whose every
// symbol is made private but its entry points: so no copy of an inline function or template
// compiled there can stand in for the baseline's own (the one-definition rule would let the
// linker keep either), and nothing runs there before its entry point is called. An entry point
// is an extern "C" function named by FASTK_KERNEL(name) in the kernel source; the dispatching
// source (compiled once) declares every level's with FASTK_DECLARE_KERNEL and calls
// FASTK_PICK_KERNEL(name), the one for kernel_level().
#pragma once

#include "isa/level.h"

#ifndef FASTK_KERNEL_LEVEL
#define FASTK_KERNEL_LEVEL base  // the library's own compile
#endif

#define FASTK_KERNEL_NAME2(name, level) fastk_kernel_##name##_##level
#define FASTK_KERNEL_NAME(name, level) FASTK_KERNEL_NAME2(name, level)
// In a kernel source: this compile's entry point `name`.
#define FASTK_KERNEL(name) FASTK_KERNEL_NAME(name, FASTK_KERNEL_LEVEL)

#ifdef FASTK_KERNELS_x86_64_v3
#define FASTK_IF_KERNELS_x86_64_v3(...) __VA_ARGS__
#define FASTK_KERNEL_OR_NULL_x86_64_v3(name) &FASTK_KERNEL_NAME(name, x86_64_v3)
#else
#define FASTK_IF_KERNELS_x86_64_v3(...)
#define FASTK_KERNEL_OR_NULL_x86_64_v3(name) nullptr
#endif
#ifdef FASTK_KERNELS_x86_64_v4
#define FASTK_IF_KERNELS_x86_64_v4(...) __VA_ARGS__
#define FASTK_KERNEL_OR_NULL_x86_64_v4(name) &FASTK_KERNEL_NAME(name, x86_64_v4)
#else
#define FASTK_IF_KERNELS_x86_64_v4(...)
#define FASTK_KERNEL_OR_NULL_x86_64_v4(name) nullptr
#endif

// In the dispatching source: declares entry point `name` of every level built.
#define FASTK_DECLARE_KERNEL(result, name, parameters)                                         \
  extern "C" result FASTK_KERNEL_NAME(name, base) parameters;                                  \
  FASTK_IF_KERNELS_x86_64_v3(extern "C" result FASTK_KERNEL_NAME(name, x86_64_v3) parameters;) \
      FASTK_IF_KERNELS_x86_64_v4(extern "C" result FASTK_KERNEL_NAME(name, x86_64_v4) parameters;)

// The entry point `name` of kernel_level(), a function pointer.
#define FASTK_PICK_KERNEL(name)                                                       \
  ::fastk::isa::pick(::fastk::isa::Kernels<decltype(&FASTK_KERNEL_NAME(name, base))>{ \
      &FASTK_KERNEL_NAME(name, base), FASTK_KERNEL_OR_NULL_x86_64_v3(name),           \
      FASTK_KERNEL_OR_NULL_x86_64_v4(name)})

namespace fastk::isa {

// One kernel's entry points; null where the level was not built.
template <typename Fn>
struct Kernels {
  Fn base;
  Fn x86_64_v3;
  Fn x86_64_v4;
};

template <typename Fn>
Fn pick(const Kernels<Fn>& k) {
  switch (kernel_level()) {
    case Level::kX86_64_V4:
      if (k.x86_64_v4 != nullptr) return k.x86_64_v4;
      [[fallthrough]];
    case Level::kX86_64_V3:
      if (k.x86_64_v3 != nullptr) return k.x86_64_v3;
      [[fallthrough]];
    case Level::kX86_64_V2:
    case Level::kX86_64:
      return k.base;
  }
  return k.base;
}

}  // namespace fastk::isa
