// Recorded outputs (tests/golden/): fingerprints of files and vectors, kept one per line as
// "case key fingerprint", that a change meant to change nothing must reproduce bit for bit
// (tests/system/protocol_matrix_test.cc). FASTK_RECORD_GOLDEN=1 records a case anew instead
// of comparing; record with `ctest -j1` (cases share the file), then review the diff.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace fastk::testutil {

// FNV-1a, 64 bits, and the length: enough to tell two outputs apart, no defence against anyone.
inline std::string fingerprint(const std::string& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  std::ostringstream out;
  out << std::hex << h << ":" << std::dec << bytes.size();
  return out.str();
}

using GoldenCase = std::map<std::string, std::string>;  // key -> fingerprint

inline std::filesystem::path golden_path(const std::string& file) {
  return std::filesystem::path(FASTK_SOURCE_DIR) / "tests" / "golden" / file;
}

inline std::map<std::string, GoldenCase> read_golden(const std::string& file) {
  std::map<std::string, GoldenCase> golden;
  std::ifstream in(golden_path(file));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, key, print;
    if (fields >> name >> key >> print) golden[name][key] = print;
  }
  return golden;
}

inline void record_golden(const std::string& file, const std::string& name,
                          const GoldenCase& prints) {
  auto golden = read_golden(file);
  golden[name] = prints;
  std::ofstream out(golden_path(file));
  out << "# case, output, FNV-1a 64:bytes (tests/support/golden.h)\n";
  for (const auto& [c, keys] : golden) {
    for (const auto& [key, print] : keys) out << c << " " << key << " " << print << "\n";
  }
}

// `prints` equal the record of `name` in tests/golden/`file` (recorded first under
// FASTK_RECORD_GOLDEN). Returns the record, empty when there is none (a failure).
inline GoldenCase expect_golden(const std::string& file, const std::string& name,
                                const GoldenCase& prints) {
  if (std::getenv("FASTK_RECORD_GOLDEN") != nullptr) record_golden(file, name, prints);
  const auto golden = read_golden(file);
  const auto recorded = golden.find(name);
  if (recorded == golden.end()) {
    ADD_FAILURE() << name << " has no record in " << golden_path(file)
                  << "; run it once with FASTK_RECORD_GOLDEN=1 on a tree whose results are right";
    return {};
  }
  EXPECT_EQ(prints, recorded->second) << name << ": the outputs are not the recorded ones";
  return recorded->second;
}

}  // namespace fastk::testutil
