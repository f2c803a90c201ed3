// Replays a fuzz target's corpus without a fuzzing engine: every file of the folder goes
// through LLVMFuzzerTestOneInput once (a crash or an abort fails the caller's test).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fastk::testing {

// The number of files replayed; 0 (with a message) when the folder has none.
inline std::size_t replay_corpus(const char* dir) {
  std::size_t replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++replayed;
  }
  if (replayed == 0) std::fprintf(stderr, "no corpus files in %s\n", dir);
  return replayed;
}

}  // namespace fastk::testing
