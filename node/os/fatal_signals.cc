#include "node/os/fatal_signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "isa/level.h"

namespace fastk::node::os {
namespace {

constexpr int kSignals[] = {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGABRT};

std::atomic<std::int64_t> g_iteration{0};
char g_context[512] = "";  // set before the handlers are installed, read only in them

// Async-signal-safe appending: what the handler may do.
struct Line {
  char text[1024];
  std::size_t size = 0;
  void add(const char* s) {
    for (; *s != 0 && size + 1 < sizeof text; ++s) text[size++] = *s;
  }
  void add(std::int64_t value) {
    char digits[24];
    int n = 0;
    std::uint64_t v = value < 0 ? 0 : static_cast<std::uint64_t>(value);
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0 && size + 1 < sizeof text) text[size++] = digits[--n];
  }
};

void on_fatal_signal(int signal, siginfo_t* info, void*) {
  Line line;
  line.add(kDiedLine);
  line.add("SIG");
  const char* name = sigabbrev_np(signal);
  if (name != nullptr) line.add(name);
  const std::int64_t iteration = g_iteration.load(std::memory_order_relaxed);
  if (iteration > 0) {
    line.add(" after ");
    line.add(iteration);
    line.add(" iterations");
  } else {
    line.add(" at start-up");
  }
  if (info != nullptr && info->si_code <= 0 && info->si_pid == getpid()) {
    line.add(" (raised by the process itself: abort() or a failed assertion)");
  } else if (info != nullptr && info->si_code <= 0) {  // SI_USER, SI_QUEUE, SI_TKILL: kill()
    line.add(" (sent by process ");
    line.add(static_cast<std::int64_t>(info->si_pid));
    line.add(")");
  } else if (signal == SIGILL) {
    line.add(" (an instruction this CPU does not have)");
  }
  line.add(": ");
  line.add(g_context);
  line.add("\n");
  if (write(STDERR_FILENO, line.text, line.size) < 0) {
    // Nothing more to do: the signal below still ends the process.
  }
  // Dies of the same signal: the default action, raised again on return (a faulting
  // instruction runs again and faults).
  ::signal(signal, SIG_DFL);
  if (info == nullptr || info->si_code <= 0) raise(signal);
}

}  // namespace

void report_fatal_signals(const std::string& context) {
  std::strncpy(g_context, context.c_str(), sizeof g_context - 1);
  // A stack overflow (SIGSEGV) leaves no stack to run the handler on: this thread's handlers
  // run on a stack of their own (other threads' overflows still die without a line).
  static char alternate_stack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals) sigaction(signal, &action, nullptr);
}

void set_iteration_for_fatal_signals(std::int64_t iteration) {
  g_iteration.store(iteration, std::memory_order_relaxed);
}

std::string instruction_set_context() {
  std::string kernels;
  try {
    kernels = isa::describe(isa::kernel_level());
  } catch (const std::exception& e) {  // a bad FASTK_ISA: its own error comes later
    kernels = "none chosen (" + std::string(e.what()) + ")";
  }
  const isa::Level cpu = isa::cpu_level();
  std::string text = "fastk built with -march=" + isa::build_march() + ", kernels " + kernels +
                     ", on a " + isa::describe(cpu) + " CPU";
  if (cpu != isa::Level::kX86_64_V4) {
    const auto next = static_cast<isa::Level>(static_cast<int>(cpu) + 1);
    std::string lacks;
    for (const auto& f : isa::missing_features(next)) lacks += (lacks.empty() ? "" : " ") + f;
    text += " (it lacks " + lacks + " of " + isa::level_name(next) + ")";
  }
  return text;
}

}  // namespace fastk::node::os
