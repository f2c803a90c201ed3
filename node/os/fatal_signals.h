// A fastk process that dies of a fatal signal (SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGABRT, or one
// of these sent by another process) says so on stderr first, in one line that `fastk run` and
// `fastk doctor` read (kDiedLine): the signal, whether it came at start-up or after how many
// iterations, who sent it if a process did, and which instruction sets the binary and its
// kernels use on what CPU. Then the signal kills it as before: its exit status is unchanged.
// The line matters most behind ssh, whose exit code (255) does not tell a signal from a lost
// connection. SIGKILL cannot be caught: it stays "killed by SIGKILL" (or ssh's 255).
#pragma once

#include <cstdint>
#include <string>

namespace fastk::node::os {

inline constexpr const char* kDiedLine = "@died ";

// Installs the handlers; `context` ends the line ("kernels x86-64-v3 (AVX2, FMA) ...").
void report_fatal_signals(const std::string& context);
// What the line says of where the process was: 0 (the default) "at start-up", else "after N
// iterations".
void set_iteration_for_fatal_signals(std::int64_t iteration);

// The context report_fatal_signals is given by fastk: the -march of the binary's own code, the
// kernels this process runs, and this CPU's level with what it lacks of the next one.
std::string instruction_set_context();

}  // namespace fastk::node::os
