// Loading a user's module, and every check that can be made before a peer starts: each
// failure is one std::invalid_argument naming the file and what is wrong.
#include "learning/torchscript/loaded_module.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fastk::learning::torchscript {
namespace {

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream text;
  text << sizes;
  return text.str();
}

[[noreturn]] void refuse(const std::string& file, const std::string& what) {
  throw std::invalid_argument("TorchScript model '" + file + "': " + what);
}

std::shared_ptr<const std::string> read_bytes(const std::string& file) {
  if (file.empty()) {
    throw std::invalid_argument(
        "[model] kind = \"torchscript\" needs file = \"PATH.pt\" (a module saved with "
        "torch.jit.save; experiments/models/export_torchscript.py writes some)");
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    refuse(file, "no such file (experiments/models/export_torchscript.py NAME " + file +
                     " writes the models the shipped configs use)");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in || !bytes) refuse(file, "cannot be read");
  return std::make_shared<const std::string>(std::move(bytes).str());
}

torch::jit::Module load(const std::string& file, const std::string& bytes) {
  try {
    return module_from(bytes);
  } catch (const std::exception& e) {
    refuse(file, "not a TorchScript module saved with torch.jit.save (" + short_message(e) + ")");
  }
}

// A forward pass of two zero inputs of the data's shape, in evaluation mode: the module must
// accept them and give float logits [2, classes].
void check_forward(torch::jit::Module& module, const std::string& file, const SampleShape& shape,
                   int classes) {
  const std::vector<std::int64_t> input = {2, shape.channels, shape.height, shape.width};
  const std::string input_text = "inputs " + shape_text(input) + " (float32, the data set's shape)";
  torch::jit::IValue output;
  try {
    torch::NoGradGuard no_grad;
    module.eval();
    output = module.forward({torch::zeros(input, torch::kFloat32)});
  } catch (const std::exception& e) {
    refuse(file, "fails on " + input_text + ": " + short_message(e));
  }
  if (!output.isTensor()) {
    refuse(file, "returns " + output.tagKind() + " for " + input_text +
                     ", not a tensor of logits [batch, classes]");
  }
  const at::Tensor logits = output.toTensor();
  if (logits.dim() != 2 || logits.size(0) != 2) {
    refuse(file, "returns a tensor of shape " + shape_text(logits.sizes()) + " for " + input_text +
                     "; fastk needs logits [batch, classes] = [2, " + std::to_string(classes) +
                     "]");
  }
  if (logits.size(1) != classes) {
    refuse(file, "has " + std::to_string(logits.size(1)) + " outputs, the data set has " +
                     std::to_string(classes) + " classes");
  }
  if (logits.scalar_type() != torch::kFloat32) {
    refuse(file, std::string("returns ") + c10::toString(logits.scalar_type()) +
                     " logits; fastk trains float32 modules (call .float() before saving)");
  }
}

}  // namespace

torch::jit::Module module_from(const std::string& bytes) {
  std::istringstream in(bytes);
  return torch::jit::load(in, torch::kCPU);
}

std::string short_message(const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  std::string message = torch_error ? torch_error->what_without_backtrace() : e.what();
  const auto end = message.find('\n');
  if (end != std::string::npos) message.resize(end);
  return message;
}

ParameterLayout layout_of(const torch::jit::Module& module) {
  ParameterLayout layout;
  layout.offsets.push_back(0);
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    layout.names.push_back(p.name);
    layout.shapes.push_back(p.value.sizes().vec());
    layout.offsets.push_back(layout.offsets.back() + std::size_t(p.value.numel()));
  }
  return layout;
}

LoadedModule load_checked_module(const std::string& file, const SampleShape& shape, int classes) {
  if (classes < 2) {
    refuse(file,
           "TorchScript models train classifiers (cross-entropy on their logits); the "
           "data set has no classes");
  }
  auto bytes = read_bytes(file);
  LoadedModule loaded{bytes, load(file, *bytes), {}, {}, {}};
  loaded.layout = layout_of(loaded.module);
  if (loaded.layout.size() == 0) refuse(file, "the module has no parameters to train");
  for (const auto& p : loaded.module.named_parameters(true)) {
    if (p.value.scalar_type() != torch::kFloat32) {
      refuse(file, "parameter " + p.name + " is " + c10::toString(p.value.scalar_type()) +
                       "; fastk moves float32 vectors (call .float() before saving)");
    }
    const at::Tensor values = p.value.detach().contiguous();
    loaded.initial.insert(loaded.initial.end(), values.data_ptr<float>(),
                          values.data_ptr<float>() + values.numel());
  }
  for (const auto& b : loaded.module.named_buffers(true)) {
    if (b.value.is_floating_point()) loaded.buffers.push_back(b.name);
  }
  check_forward(loaded.module, file, shape, classes);
  return loaded;
}

}  // namespace fastk::learning::torchscript
