// Test helper: TorchScript modules written by Debian's python3-torch (the backend's tests
// need real modules saved by torch.jit.save, not hand-made files). Tests run from the source
// tree (tests/CMakeLists.txt), where the scripts are.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fastk::testing {

// Debian's interpreter, which has python3-torch, whatever python3 comes first in PATH.
inline constexpr const char* kDebianPython = "/usr/bin/python3";

// Runs `script NAME OUT` and returns OUT (dir/NAME.pt); a failure to write fails the test.
inline std::filesystem::path write_module(const std::string& script, const std::string& name,
                                          const std::filesystem::path& dir) {
  const auto out = dir / (name + ".pt");
  const std::string command = std::string(kDebianPython) + " " + script + " " + name + " " +
                              out.string() + " > " + (dir / (name + ".log")).string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << "could not write " << name << ": " << command;
  return out;
}

// A module of tests/support/torchscript_modules.py (tiny_mlp, no_parameters, ...).
inline std::filesystem::path test_module(const std::string& name,
                                         const std::filesystem::path& dir) {
  return write_module("tests/support/torchscript_modules.py", name, dir);
}

// A model of experiments/models/export_torchscript.py (mlp, lenet5, cifar_cnn, resnet20), as a
// user writes it.
inline std::filesystem::path exported_model(const std::string& name,
                                            const std::filesystem::path& dir) {
  return write_module("experiments/models/export_torchscript.py", name, dir);
}

}  // namespace fastk::testing
