// A fresh, empty folder per test (named after the process and the running test), so tests
// that write files can run in parallel under CTest.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace fastk::testutil {

inline std::filesystem::path fresh_test_dir(const std::string& prefix = "fastk") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir =
      std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()) + "_" +
                                                info->test_suite_name() + "_" + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace fastk::testutil
