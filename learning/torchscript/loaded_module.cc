// Loading a user's module, and every check that can be made before a peer starts: each
// failure is one std::invalid_argument naming the file and what is wrong.
#include "learning/torchscript/loaded_module.h"

#include <filesystem>
#include <fstream>
#include <map>
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

// What a forward pass of two zero inputs returned, `mode` ("in evaluation mode" or "in
// training mode") and `input_text` saying what was given: float32 logits [2, classes].
void check_logits(const torch::jit::IValue& output, const std::string& file,
                  const std::string& mode, const std::string& input_text, int classes) {
  if (!output.isTensor()) {
    refuse(file, "returns " + output.tagKind() + " " + mode + " for " + input_text +
                     ", not a tensor of logits [batch, classes]");
  }
  const at::Tensor logits = output.toTensor();
  if (logits.dim() != 2 || logits.size(0) != 2) {
    refuse(file, "returns a tensor of shape " + shape_text(logits.sizes()) + " " + mode + " for " +
                     input_text + "; fastk needs logits [batch, classes] = [2, " +
                     std::to_string(classes) + "]");
  }
  if (logits.size(1) != classes) {
    refuse(file, "has " + std::to_string(logits.size(1)) + " outputs " + mode +
                     ", the data set has " + std::to_string(classes) + " classes");
  }
  if (logits.scalar_type() != torch::kFloat32) {
    refuse(file, std::string("returns ") + c10::toString(logits.scalar_type()) +
                     " logits; fastk trains float32 modules (call .float() before saving)");
  }
}

// Two zero inputs of the data's shape through `module` (a copy of its own: training mode
// changes nothing of the one that trains) in evaluation mode, then in training mode with a
// backward pass, which must reach a parameter: what fails only in training (auxiliary
// outputs, a detached output) is found before any peer starts.
void check_forward(torch::jit::Module module, const std::string& file, const SampleShape& shape,
                   int classes) {
  const std::vector<std::int64_t> input = {2, shape.channels, shape.height, shape.width};
  const std::string input_text = "inputs " + shape_text(input) + " (float32, the data set's shape)";
  const at::Tensor zeros = torch::zeros(input, torch::kFloat32);
  torch::jit::IValue output;
  try {
    torch::NoGradGuard no_grad;
    module.eval();
    output = module.forward({zeros});
  } catch (const std::exception& e) {
    refuse(file, "fails on " + input_text + ": " + short_message(e));
  }
  check_logits(output, file, "in evaluation mode", input_text, classes);
  try {
    module.train();
    output = module.forward({zeros});
  } catch (const std::exception& e) {
    refuse(file, "fails in training mode on " + input_text + ": " + short_message(e));
  }
  check_logits(output, file, "in training mode", input_text, classes);
  if (!output.toTensor().requires_grad()) {
    refuse(file, "its logits do not depend on any parameter in training mode (detached?)");
  }
  try {
    at::cross_entropy_loss(output.toTensor(), torch::zeros({2}, torch::kInt64)).backward();
  } catch (const std::exception& e) {
    refuse(file, "its backward pass fails: " + short_message(e));
  }
}

// The parameters become the flat vector: each one a float32 tensor of its own that training
// may change. Tied (shared) parameters would take two slices of the vector, one read and one
// trained; frozen ones would still be decayed, stepped and averaged.
void check_parameters(const torch::jit::Module& module, const std::string& file) {
  std::map<const void*, std::string> seen;  // TensorImpl -> the first name it had
  for (const auto& p : module.named_parameters(true)) {
    if (p.value.scalar_type() != torch::kFloat32) {
      refuse(file, "parameter " + p.name + " is " + c10::toString(p.value.scalar_type()) +
                       "; fastk moves float32 vectors (call .float() before saving)");
    }
    if (!p.value.requires_grad()) {
      refuse(file, "parameter " + p.name +
                       " does not require grad (frozen): fastk trains every parameter; make "
                       "it a buffer (register_buffer) to keep it fixed");
    }
    const auto [it, fresh] = seen.emplace(p.value.unsafeGetTensorImpl(), p.name);
    if (!fresh) {
      refuse(file, "parameters " + it->second + " and " + p.name +
                       " are one tensor (tied weights), which fastk's flat vector cannot share");
    }
  }
}

// Buffers are not in the vector: fastk would neither average them nor evaluate with them
// (peers and the simulator evaluate fresh copies of the module), so a module whose floating
// buffers training changes (batch norm's running statistics) is refused.
void check_buffers(const torch::jit::Module& module, const std::string& file) {
  std::string names;
  int count = 0;
  for (const auto& b : module.named_buffers(true)) {
    if (!b.value.is_floating_point()) continue;
    if (++count <= 3) names += (names.empty() ? "" : ", ") + b.name;
  }
  if (count == 0) return;
  refuse(file, "has " + std::to_string(count) + " floating-point buffer(s) (" + names +
                   (count > 3 ? ", ..." : "") +
                   "): running statistics that fastk neither averages nor evaluates with; use "
                   "batch norm without them (nn.BatchNorm2d(n, track_running_stats=False))");
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
  LoadedModule loaded{bytes, load(file, *bytes), {}, {}};
  loaded.layout = layout_of(loaded.module);
  if (loaded.layout.size() == 0) refuse(file, "the module has no parameters to train");
  check_parameters(loaded.module, file);
  check_buffers(loaded.module, file);
  for (const auto& p : loaded.module.named_parameters(true)) {
    const at::Tensor values = p.value.detach().contiguous();
    loaded.initial.insert(loaded.initial.end(), values.data_ptr<float>(),
                          values.data_ptr<float>() + values.numel());
  }
  check_forward(module_from(*bytes), file, shape, classes);
  return loaded;
}

}  // namespace fastk::learning::torchscript
