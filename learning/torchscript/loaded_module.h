// A TorchScript module loaded and checked against the data it will train on (internal to
// learning/torchscript/: it includes libtorch).
#pragma once

#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

#include "learning/dataset.h"

namespace fastk::learning::torchscript {

// The flat parameter vector's layout: the module's parameters in named_parameters() order
// (the order of registration, recursing into submodules), each tensor's values in row-major
// order, one after the other.
struct ParameterLayout {
  std::vector<std::string> names;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::size_t> offsets;  // tensor i: [offsets[i], offsets[i + 1])
  std::size_t size() const { return offsets.empty() ? 0 : offsets.back(); }
};

struct LoadedModule {
  std::shared_ptr<const std::string> bytes;  // the file as read: clones load from it
  torch::jit::Module module;
  ParameterLayout layout;
  std::vector<float> initial;  // the parameters as saved: every peer's starting point
};

// Loads `file` and checks it (torchscript_model.h, make_torchscript_model). Throws
// std::invalid_argument naming the file and what is wrong.
LoadedModule load_checked_module(const std::string& file, const SampleShape& shape, int classes);

// A module of its own (parameters that are leaves of their own) from a file's bytes.
// Module::clone() will not do: its parameters are copies made by autograd-recorded clone(),
// whose gradients flow back into the original's.
torch::jit::Module module_from(const std::string& bytes);

// The layout of `module`'s parameters (also for a clone, whose tensors are new ones).
ParameterLayout layout_of(const torch::jit::Module& module);

// libtorch's message without its C++ backtrace, first line only.
std::string short_message(const std::exception& e);

}  // namespace fastk::learning::torchscript
