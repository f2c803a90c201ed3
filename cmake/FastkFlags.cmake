# Compiler flags shared by every fastk target, in one place. Targets opt in by linking
# fastk_flags (an INTERFACE library), so nothing is set globally.
add_library(fastk_flags INTERFACE)
target_compile_options(fastk_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                             -Wnon-virtual-dtor
                                             # GCC 12 false positive on inlined std::string
                                             # concatenation (GCC bug 105329).
                                             -Wno-restrict)
# Eigen, the same for every target (templates instantiated under different settings would
# break the one-definition rule): never start threads of its own (one model instance is one
# thread's work; peers are the parallelism), and put matrix-product packing buffers on the
# stack up to 1 MiB instead of 128 KiB, so that the CNNs' steady-state gradients allocate
# nothing (tests/unit/learning/allocation_test.cc checks it; threads need the usual 8 MiB
# stacks).
target_compile_definitions(fastk_flags INTERFACE EIGEN_DONT_PARALLELIZE
                                                 EIGEN_STACK_ALLOCATION_LIMIT=1048576)
if(FASTK_WERROR)
  target_compile_options(fastk_flags INTERFACE -Werror)
endif()
if(FASTK_NATIVE)
  # Eigen's kernels gain a lot from AVX2/FMA; binaries are then tied to this CPU family.
  target_compile_options(fastk_flags INTERFACE -march=native)
endif()
if(FASTK_SANITIZE)
  string(REPLACE ";" "," _fastk_san "${FASTK_SANITIZE}")
  target_compile_options(fastk_flags INTERFACE -fsanitize=${_fastk_san} -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
  target_link_options(fastk_flags INTERFACE -fsanitize=${_fastk_san})
endif()
