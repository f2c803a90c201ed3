// The one way fastk includes Eigen (tests/lint/check_includes.sh keeps it so).
//
// GCC 12 reports false -Wmaybe-uninitialized warnings from its own x86 intrinsic headers when
// Eigen's vector kernels are inlined: the intrinsics build "undefined" vectors with the C idiom
// `__m256d __Y = __Y;`, which GCC accepts as intentional in C but not in C++ (GCC bug 105593;
// Debian 12 ships GCC 12.2). They appear where -march enables AVX or AVX-512 and, with
// FASTK_WERROR, fail the build. Like other Eigen users, we silence this one warning inside
// Eigen, not for the whole program: GCC judges a warning by the pragmas in force where it
// points, and Eigen's headers, with the intrinsic headers they pull in, are read between this
// push and pop. The warning stays on for fastk's own code.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ <= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>
#pragma GCC diagnostic pop
#else
#include <Eigen/Dense>
#endif
