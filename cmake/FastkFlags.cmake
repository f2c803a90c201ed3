# Compiler flags shared by every fastk target, in one place. Targets opt in by linking
# fastk_flags (an INTERFACE library), so nothing is set globally. fastk_common_flags is all of
# it but the instruction set (-march): the kernels compiled per level (FastkKernels.cmake)
# link it and bring their own.
add_library(fastk_common_flags INTERFACE)
add_library(fastk_flags INTERFACE)
target_link_libraries(fastk_flags INTERFACE fastk_common_flags)
target_compile_options(fastk_common_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                                    -Wnon-virtual-dtor)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 false positive on inlined std::string concatenation (GCC bug 105329); clang (the
  # fuzz build) has no such warning and would warn about the option on every file.
  target_compile_options(fastk_common_flags INTERFACE -Wno-restrict)
endif()
# Eigen, the same for every target (templates instantiated under different settings would
# break the one-definition rule): never start threads of its own (one model instance is one
# thread's work; peers are the parallelism), and put matrix-product packing buffers on the
# stack up to 1 MiB instead of 128 KiB, so that the CNNs' steady-state gradients allocate
# nothing (tests/unit/learning/allocation_test.cc checks it; threads need the usual 8 MiB
# stacks).
target_compile_definitions(fastk_common_flags INTERFACE EIGEN_DONT_PARALLELIZE
                                                        EIGEN_STACK_ALLOCATION_LIMIT=1048576)
if(FASTK_WERROR)
  target_compile_options(fastk_common_flags INTERFACE -Werror)
endif()
if(FASTK_MARCH)
  # The default, x86-64, runs on every x86-64 CPU; the hot kernels, which gain a lot from
  # AVX2/FMA and AVX-512, are compiled for those too and chosen at run time
  # (FastkKernels.cmake). native ties the binary to this CPU's family (isa/startup_check.cc
  # refuses elsewhere). scripts/check-isa.sh compiles for other levels to keep every CPU Debian
  # runs on building cleanly.
  target_compile_options(fastk_flags INTERFACE -march=${FASTK_MARCH})
endif()
# GCC 12 miscompiles 256- and 512-bit constants whose high 64-bit words are zero once AVX-512
# is on: its x86 back end stores them as a broadcast of the lowest word, so
# std::vector<double>{1, 1, 1, 0} holds {1, 1, 1, 1} (Debian 12's GCC 12.2 with -march=native on
# an AVX-512 CPU, or -march=x86-64-v4). It tries that broadcast only when moves from general to
# vector registers are tuned as cheap; tuning them off keeps every constant whole and costs
# nothing measurable (docs/build.md). tests/unit/toolchain/wide_constants_test.cc checks it.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13 AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  target_compile_options(fastk_common_flags INTERFACE -mtune-ctrl=^inter_unit_moves_to_vec)
endif()
if(FASTK_SANITIZE)
  string(REPLACE ";" "," _fastk_san "${FASTK_SANITIZE}")
  target_compile_options(fastk_common_flags INTERFACE -fsanitize=${_fastk_san}
                         -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(fastk_common_flags INTERFACE -fsanitize=${_fastk_san})
endif()
