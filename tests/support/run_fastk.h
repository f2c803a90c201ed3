// Runs the real `fastk` executable (FASTK_BINARY) with arguments, capturing what a user
// sees: exit code and stdout + stderr.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace fastk::testing {

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

inline CommandResult run_fastk(const std::string& args) {
  const std::string command = std::string(FASTK_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) {
    output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace fastk::testing
