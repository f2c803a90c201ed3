// The start-up check of the fastk executable (startup_check.cc): before any other code of the
// program runs, static initialisers included, it refuses to start on a CPU that lacks an
// instruction set the binary's own code needs (FASTK_MARCH) or that FASTK_ISA asks the
// kernels to use: it prints one line that names the host, the level and the missing features,
// and exits with kCpuRefusedExitCode, instead of dying of SIGILL somewhere later.
#pragma once

namespace fastk::isa {

// What the launcher and the doctor recognise a refusal by (the line says why).
inline constexpr int kCpuRefusedExitCode = 3;
inline constexpr const char* kRefusedPrefix = "fastk: cannot start on host ";

}  // namespace fastk::isa
