// A fresh, empty folder per test (named after the process and the running test), so tests
// that write files can run in parallel under CTest. It lives in the temporary folder, which
// CTest points into the build folder (TMPDIR, tests/CMakeLists.txt), so the suite leaves
// nothing in /tmp; it is removed when its test passes or skips, and kept, for a look, when
// the test fails.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace fastk::testutil {

// Removes the folders made for a test when the test ends without a failure.
class RemoveFoldersOfPassingTests : public ::testing::EmptyTestEventListener {
 public:
  void add(const std::filesystem::path& dir) { dirs_.push_back(dir); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) {
      std::error_code ignored;  // a folder a test removed itself is fine
      for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ignored);
    }
    dirs_.clear();
  }

 private:
  std::vector<std::filesystem::path> dirs_;
};

// The process's one listener, registered with GoogleTest (which owns it) on first use.
inline RemoveFoldersOfPassingTests& folders_to_remove() {
  static auto* listener = [] {
    auto* made = new RemoveFoldersOfPassingTests;
    ::testing::UnitTest::GetInstance()->listeners().Append(made);
    return made;
  }();
  return *listener;
}

// Named <prefix>_<pid>_<8 hex digits of the test's name>, short because Unix-domain socket
// paths inside it must stay under 108 bytes wherever the build folder is (a kept folder is
// found by its pid and the time it was made).
inline std::filesystem::path fresh_test_dir(const std::string& prefix = "fastk") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string(info->test_suite_name()) + "." + info->name();
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x",
                static_cast<unsigned>(std::hash<std::string>{}(name)&0xffffffffu));
  auto dir = std::filesystem::temp_directory_path() /
             (prefix + "_" + std::to_string(::getpid()) + "_" + hash);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  folders_to_remove().add(dir);
  return dir;
}

}  // namespace fastk::testutil
