# Compiler flags shared by every fastk target, in one place. Targets opt in by linking
# fastk_flags (an INTERFACE library), so nothing is set globally.
add_library(fastk_flags INTERFACE)
target_compile_options(fastk_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                             -Wnon-virtual-dtor
                                             # GCC 12 false positive on inlined std::string
                                             # concatenation (GCC bug 105329).
                                             -Wno-restrict)
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
