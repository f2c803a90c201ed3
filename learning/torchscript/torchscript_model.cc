// The TorchScript backend: a module's parameters are views of the caller's flat vector, its
// loss is cross-entropy on its logits, its gradient comes from autograd (docs/learning.md §6).
#include "learning/torchscript/torchscript_model.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "learning/torchscript/loaded_module.h"

namespace fastk::learning {
namespace {

using torchscript::LoadedModule;
using torchscript::ParameterLayout;

// Evaluation and prediction run over chunks of this many rows: memory stays bounded, and a
// module that normalises over its batch (batch norm without running statistics) sees
// batches of a size like training's.
constexpr std::int64_t kChunk = 256;
// libtorch's CPU allocator aligns to 64 bytes; a caller's vector aligned the same way is used
// in place (see bind()).
constexpr std::uintptr_t kAlignment = 64;

// libtorch's intra-op thread count is OpenMP's, which is a setting of each thread: a thread
// of the simulator's pool or the launcher's evaluation would otherwise start with one per
// core. Set on a thread's first use (with one, the results do not depend on the machine).
void use_threads(int threads) {
  thread_local int set = 0;
  if (set == threads) return;
  at::set_num_threads(threads);
  set = threads;
}

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(std::string file, std::shared_ptr<const std::string> bytes,
                   torch::jit::Module module, std::vector<float> initial, double l2, int threads)
      : file_(std::move(file)),
        bytes_(std::move(bytes)),
        module_(std::move(module)),
        layout_(torchscript::layout_of(module_)),
        initial_(std::move(initial)),
        l2_(l2),
        threads_(threads),
        aligned_(torch::empty({std::int64_t(layout_.size())}, torch::kFloat32)),
        half_gradient_(layout_.size()) {
    for (const auto& p : module_.named_parameters(true)) tensors_.push_back(p.value);
  }

  std::string name() const override { return "torchscript"; }
  std::size_t num_parameters() const override { return layout_.size(); }
  // The parameters saved in the file are the starting point (the exporter seeds them); a
  // config's [model] seed does not apply.
  void initialize(std::span<float> params, std::uint64_t) const override {
    check_size(params.size(), "parameter vector");
    std::copy(initial_.begin(), initial_.end(), params.begin());
  }
  using Model::loss_and_gradient;
  double loss_and_gradient(std::span<const float> params, const BatchView& batch,
                           std::span<float> grad, GradientNoise* noise) override;
  void predict(std::span<const float> params, const BatchView& batch,
               std::span<std::int32_t> out) override;
  Evaluation evaluate(std::span<const float> params, const Dataset& data) override;
  // Not known for a module we did not write (benchmarks print no rate for 0).
  double flops_per_sample() const override { return 0; }
  std::unique_ptr<Model> clone() const override {
    return std::make_unique<TorchScriptModel>(file_, bytes_, torchscript::module_from(*bytes_),
                                              initial_, l2_, threads_);
  }

 private:
  void check_size(std::size_t size, const char* what) const;
  void bind(std::span<const float> params);
  at::Tensor inputs(const Dataset& data, std::span<const std::int64_t> rows);
  at::Tensor logits(const Dataset& data, std::span<const std::int64_t> rows);
  double mean_loss_and_gradient(const Dataset& data, std::span<const std::int64_t> rows,
                                std::span<float> grad);
  GradientNoise estimate_noise(const BatchView& batch, std::span<const float> params,
                               std::span<const float> grad);

  std::string file_;
  std::shared_ptr<const std::string> bytes_;  // the file's, shared by the clones
  torch::jit::Module module_;
  ParameterLayout layout_;
  std::vector<float> initial_;
  double l2_;
  int threads_;
  std::vector<at::Tensor> tensors_;  // the module's parameters, in layout_ order
  at::Tensor aligned_;               // a copy of a caller's vector that is not aligned
  const float* bound_ = nullptr;     // what tensors_ view now
  std::vector<float> half_gradient_;
};

void TorchScriptModel::check_size(std::size_t size, const char* what) const {
  if (size != layout_.size()) {
    throw std::invalid_argument("TorchScript model '" + file_ + "': " + what + " of " +
                                std::to_string(size) + " floats, the module has " +
                                std::to_string(layout_.size()) + " parameters");
  }
}

// The parameters become views of the caller's vector: no copy per step. libtorch's kernels
// may sum in an order that depends on an operand's alignment, and the simulator and a real
// peer hold the same values at different addresses, so a vector not aligned as libtorch's
// own tensors are is copied into one that is (one pass over the parameters).
void TorchScriptModel::bind(std::span<const float> params) {
  check_size(params.size(), "parameter vector");
  use_threads(threads_);
  const float* source = params.data();
  if (reinterpret_cast<std::uintptr_t>(source) % kAlignment != 0) {
    std::copy(params.begin(), params.end(), aligned_.data_ptr<float>());
    source = aligned_.data_ptr<float>();
  }
  if (source == bound_) return;  // the views see the new values already
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    auto* first = const_cast<float*>(source + layout_.offsets[i]);  // autograd only reads it
    tensors_[i].set_data(torch::from_blob(first, layout_.shapes[i], torch::kFloat32));
  }
  bound_ = source;
}

// The rows as a [rows, channels, height, width] float tensor.
at::Tensor TorchScriptModel::inputs(const Dataset& data, std::span<const std::int64_t> rows) {
  at::Tensor x = torch::empty(
      {std::int64_t(rows.size()), data.shape.channels, data.shape.height, data.shape.width},
      torch::kFloat32);
  float* out = x.data_ptr<float>();
  for (const std::int64_t r : rows) {
    const auto row = data.row(r);
    out = std::copy(row.begin(), row.end(), out);
  }
  return x;
}

at::Tensor TorchScriptModel::logits(const Dataset& data, std::span<const std::int64_t> rows) {
  torch::jit::IValue output;
  try {
    output = module_.forward({inputs(data, rows)});
  } catch (const std::exception& e) {
    throw std::runtime_error("TorchScript model '" + file_ + "' failed on a batch of " +
                             std::to_string(rows.size()) + ": " + torchscript::short_message(e));
  }
  if (!output.isTensor()) {
    throw std::runtime_error("TorchScript model '" + file_ + "' returned " + output.tagKind() +
                             ", not logits");
  }
  at::Tensor out = output.toTensor();
  if (out.dim() != 2 || out.size(0) != std::int64_t(rows.size()) || out.size(1) != data.classes) {
    throw std::runtime_error("TorchScript model '" + file_ +
                             "' returned logits of another shape "
                             "than [batch, classes] for a batch of " +
                             std::to_string(rows.size()));
  }
  return out;
}

at::Tensor labels_of(const Dataset& data, std::span<const std::int64_t> rows) {
  at::Tensor y = torch::empty({std::int64_t(rows.size())}, torch::kInt64);
  auto* out = y.data_ptr<std::int64_t>();
  for (const std::int64_t r : rows) *out++ = data.labels[std::size_t(r)];
  return y;
}

// Mean cross-entropy of the rows; `grad` gets its gradient (no L2 term). Autograd allocates
// the gradient tensors and we copy them out once: binding `grad` in their place would make
// autograd zero-fill and add into it instead, a pass more.
double TorchScriptModel::mean_loss_and_gradient(const Dataset& data,
                                                std::span<const std::int64_t> rows,
                                                std::span<float> grad) {
  module_.train();
  at::Tensor loss = at::cross_entropy_loss(logits(data, rows), labels_of(data, rows));
  try {
    loss.backward();
  } catch (const std::exception& e) {
    throw std::runtime_error("TorchScript model '" + file_ +
                             "': backward pass failed: " + torchscript::short_message(e));
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    float* out = grad.data() + layout_.offsets[i];
    const std::size_t count = layout_.offsets[i + 1] - layout_.offsets[i];
    const at::Tensor& g = tensors_[i].grad();
    if (!g.defined()) {  // a parameter the loss does not depend on
      std::fill(out, out + count, 0.0f);
      continue;
    }
    const at::Tensor dense = g.contiguous();
    std::copy(dense.data_ptr<float>(), dense.data_ptr<float>() + count, out);
    tensors_[i].mutable_grad().reset();
  }
  return loss.item<double>();
}

double TorchScriptModel::loss_and_gradient(std::span<const float> params, const BatchView& batch,
                                           std::span<float> grad, GradientNoise* noise) {
  check_size(grad.size(), "gradient buffer");
  bind(params);
  double loss = mean_loss_and_gradient(*batch.data, batch.indices, grad);
  if (noise) *noise = estimate_noise(batch, params, grad);
  if (l2_ != 0) {
    double norm = 0;
    for (std::size_t j = 0; j < grad.size(); ++j) {
      norm += double(params[j]) * params[j];
      grad[j] += float(l2_) * params[j];
    }
    loss += 0.5 * l2_ * norm;
  }
  return loss;
}

// Without per-sample gradients, from the first half of the batch: with g the batch's mean
// gradient over n samples and g1 that of its first n1, E||g1 - g||^2 = tr(Sigma) n2 / (n n1)
// (n2 = n - n1), so S = ||g1 - g||^2 n1 / n2 is unbiased for Var(g) = tr(Sigma) / n, like
// learning/gradient_noise.h's, for modules whose samples do not interact: batch norm
// normalises a half batch by its own statistics, which biases S upward. A half-batch pass
// more; the gradient is the same with or without it.
GradientNoise TorchScriptModel::estimate_noise(const BatchView& batch,
                                               std::span<const float> params,
                                               std::span<const float> grad) {
  GradientNoise noise;
  const std::size_t n = batch.indices.size(), n1 = n / 2;
  if (n1 < 2) return noise;  // a half batch of one: batch norm could not even run on it
  mean_loss_and_gradient(*batch.data, batch.indices.first(n1), half_gradient_);
  double difference = 0, full = 0;
  for (std::size_t j = 0; j < grad.size(); ++j) {
    const double d = double(half_gradient_[j]) - grad[j];
    const double f = double(grad[j]) + l2_ * params[j];
    difference += d * d;
    full += f * f;
  }
  const double variance = difference * double(n1) / double(n - n1);
  if (!std::isfinite(variance) || !std::isfinite(full)) return noise;
  return {std::max(0.0, full - variance), variance, true};
}

void TorchScriptModel::predict(std::span<const float> params, const BatchView& batch,
                               std::span<std::int32_t> out) {
  bind(params);
  torch::NoGradGuard no_grad;
  module_.eval();
  for (std::size_t first = 0; first < batch.indices.size(); first += kChunk) {
    const auto rows =
        batch.indices.subspan(first, std::min<std::size_t>(kChunk, batch.indices.size() - first));
    const at::Tensor predicted = logits(*batch.data, rows).argmax(1);
    const auto* p = predicted.data_ptr<std::int64_t>();
    for (std::size_t k = 0; k < rows.size(); ++k) out[first + k] = std::int32_t(p[k]);
  }
}

Evaluation TorchScriptModel::evaluate(std::span<const float> params, const Dataset& data) {
  bind(params);
  torch::NoGradGuard no_grad;
  module_.eval();
  Evaluation result;
  std::vector<std::int64_t> rows;
  double loss_sum = 0;
  std::int64_t correct = 0;
  for (std::int64_t first = 0; first < data.size(); first += kChunk) {
    rows.clear();
    for (std::int64_t r = first; r < std::min(data.size(), first + kChunk); ++r) rows.push_back(r);
    const at::Tensor out = logits(data, rows), y = labels_of(data, rows);
    loss_sum += at::cross_entropy_loss(out, y, {}, at::Reduction::Sum).item<double>();
    correct += out.argmax(1).eq(y).sum().item<std::int64_t>();
  }
  result.samples = data.size();
  if (result.samples > 0) {
    result.loss = loss_sum / double(result.samples);
    result.accuracy = double(correct) / double(result.samples);
  }
  return result;
}

Model* make_checked_model(const ModelSpec& spec, const SampleShape& shape, int classes) {
  if (spec.threads < 1) throw std::invalid_argument("[model] threads must be >= 1");
  // One intra-op thread per peer by default: N peers on N cores do not oversubscribe. The
  // inter-op pool can be sized only before its first use.
  use_threads(spec.threads);
  static const bool interop_set = [] {
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception&) {  // already in use: keep its size
    }
    return true;
  }();
  (void)interop_set;
  LoadedModule loaded = torchscript::load_checked_module(spec.file, shape, classes);
  return std::make_unique<TorchScriptModel>(spec.file, std::move(loaded.bytes),
                                            std::move(loaded.module), std::move(loaded.initial),
                                            spec.l2, spec.threads)
      .release();
}

}  // namespace
}  // namespace fastk::learning

// The plugin's entry point (plugin_loader.cc opens it): the caller owns the model. Errors are
// std::invalid_argument, thrown through to the caller.
extern "C" __attribute__((visibility("default"))) fastk::learning::Model*
fastk_make_torchscript_model(const fastk::learning::ModelSpec& spec,
                             const fastk::learning::SampleShape& shape, int classes) {
  return fastk::learning::make_checked_model(spec, shape, classes);
}
