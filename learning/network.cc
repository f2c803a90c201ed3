#include "learning/network.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "learning/layers/conv2d.h"
#include "learning/layers/dense.h"
#include "learning/layers/max_pool.h"
#include "learning/layers/relu.h"

namespace fastk::learning {
namespace {

// See Network::aligned_params.
bool is_max_aligned(const void* data) {
  return reinterpret_cast<std::uintptr_t>(data) % EIGEN_MAX_ALIGN_BYTES == 0;
}

// Copies n floats and returns their squared norm, in one pass: the multiply-adds cost next to
// nothing while the values are in registers, where a second pass over a batch of MNIST
// images would add 2% to a logistic regression's gradient. (The order of the sum is fixed
// by n and the packet width of the build: one binary gives the same bits every time, builds
// for other instruction sets may differ in the last bits.)
double copy_with_squared_norm(const float* src, float* dst, Eigen::Index n) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr Eigen::Index k = ei::packet_traits<float>::size;
  Packet sum0 = ei::pset1<Packet>(0.0f), sum1 = sum0;
  Eigen::Index i = 0;
  for (; i + 2 * k <= n; i += 2 * k) {
    const Packet v0 = ei::ploadu<Packet>(src + i), v1 = ei::ploadu<Packet>(src + i + k);
    ei::pstoreu(dst + i, v0);
    ei::pstoreu(dst + i + k, v1);
    sum0 = ei::pmadd(v0, v0, sum0);
    sum1 = ei::pmadd(v1, v1, sum1);
  }
  if (i + k <= n) {
    const Packet v = ei::ploadu<Packet>(src + i);
    ei::pstoreu(dst + i, v);
    sum0 = ei::pmadd(v, v, sum0);
    i += k;
  }
  double sum = double(ei::predux(ei::padd(sum0, sum1)));
  for (; i < n; ++i) {
    dst[i] = src[i];
    sum += double(src[i]) * double(src[i]);
  }
  return sum;
}

}  // namespace

template <typename S>
Network<S>::Network(std::vector<std::unique_ptr<Layer<S>>> layers, LossKind loss, double l2)
    : layers_(std::move(layers)), loss_(loss), l2_(l2) {
  if (layers_.empty()) throw std::invalid_argument("a network needs at least one layer");
  offsets_.push_back(0);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (i > 0 && layers_[i]->input_dim() != layers_[i - 1]->output_dim()) {
      throw std::invalid_argument("layer " + std::to_string(i) + " expects " +
                                  std::to_string(layers_[i]->input_dim()) + " inputs, gets " +
                                  std::to_string(layers_[i - 1]->output_dim()));
    }
    offsets_.push_back(offsets_.back() + layers_[i]->num_parameters());
  }
  if (loss_ == LossKind::kSquaredError && output_dim() != 1) {
    throw std::invalid_argument("squared-error networks have one output");
  }
  values_.resize(layers_.size() + 1);
  grads_.resize(layers_.size() + 1);
}

template <typename S>
Network<S>::Network(const Network& other)
    : offsets_(other.offsets_), loss_(other.loss_), l2_(other.l2_) {
  for (const auto& layer : other.layers_) layers_.push_back(layer->clone());
  values_.resize(layers_.size() + 1);
  grads_.resize(layers_.size() + 1);
}

template <typename S>
void Network<S>::initialize(std::span<S> params, std::uint64_t seed) const {
  if (params.size() != num_parameters()) {
    throw std::invalid_argument("initialize: parameter vector has " +
                                std::to_string(params.size()) + " entries, the model " +
                                std::to_string(num_parameters()));
  }
  Rng rng(seed);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->initialize(params.subspan(offsets_[i], offsets_[i + 1] - offsets_[i]), rng);
  }
}

template <typename S>
void Network<S>::gather(const BatchView& batch, double* input_norms) {
  const Dataset& data = *batch.data;
  if (data.dim != input_dim()) {
    throw std::invalid_argument("model expects " + std::to_string(input_dim()) +
                                " features per sample, data set '" + data.name + "' has " +
                                std::to_string(data.dim));
  }
  Matrix<S>& x = values_[0];
  x.resize(data.dim, batch.size());
  for (Eigen::Index b = 0; b < batch.size(); ++b) {
    const float* row = data.features.data() + batch.indices[b] * data.dim;
    if constexpr (std::is_same_v<S, float>) {
      if (input_norms) {
        input_norms[b] = copy_with_squared_norm(row, x.col(b).data(), data.dim);
        continue;
      }
    }
    x.col(b) = Eigen::Map<const Eigen::VectorXf>(row, data.dim).template cast<S>();
    if (input_norms) input_norms[b] = double(x.col(b).squaredNorm());
  }
}

template <typename S>
const Matrix<S>& Network<S>::forward(std::span<const S> params, const BatchView& batch) {
  return forward(params, batch, nullptr);
}

template <typename S>
const Matrix<S>& Network<S>::forward(std::span<const S> params, const BatchView& batch,
                                     double* input_norms) {
  gather(batch, input_norms);
  params_ = aligned_params(params);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->forward(params_ + offsets_[i], values_[i], values_[i + 1]);
  }
  return values_.back();
}

template <typename S>
const S* Network<S>::aligned_params(std::span<const S> params) {
  if (is_max_aligned(params.data())) return params.data();
  params_copy_ = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(params.data(),
                                                                       Eigen::Index(params.size()));
  return params_copy_.data();
}

template <typename S>
double Network<S>::head(const BatchView& batch, bool gradient) {
  const Matrix<S>& out = values_.back();
  Matrix<S>& g = grads_.back();
  const Eigen::Index n = out.cols();
  if (gradient) g.resize(out.rows(), n);
  double total = 0;
  if (loss_ == LossKind::kSquaredError) {
    for (Eigen::Index b = 0; b < n; ++b) {
      const double r = double(out(0, b)) - batch.data->targets[batch.indices[b]];
      total += 0.5 * r * r;
      if (gradient) g(0, b) = S(r / n);
    }
    return total;
  }
  // Softmax cross-entropy, shifted by the column maximum for stability:
  // loss = log(sum exp(z)) - z_y, dloss/dz = softmax(z) - onehot(y).
  for (Eigen::Index b = 0; b < n; ++b) {
    const int y = batch.data->labels[batch.indices[b]];
    const S top = out.col(b).maxCoeff();
    S sum = 0;
    for (Eigen::Index k = 0; k < out.rows(); ++k) sum += std::exp(out(k, b) - top);
    total += double(std::log(sum) + top - out(y, b));
    if (gradient) {
      for (Eigen::Index k = 0; k < out.rows(); ++k) {
        g(k, b) = (std::exp(out(k, b) - top) / sum - S(k == y ? 1 : 0)) / S(n);
      }
    }
  }
  return total;
}

template <typename S>
double Network<S>::loss_and_gradient(std::span<const S> params, const BatchView& batch,
                                     std::span<S> grad, GradientNoise* noise) {
  if (params.size() != num_parameters() || grad.size() != num_parameters()) {
    throw std::invalid_argument("loss_and_gradient: parameter or gradient vector size is not " +
                                std::to_string(num_parameters()));
  }
  if (batch.size() == 0) throw std::invalid_argument("loss_and_gradient: empty batch");
  // A single sample has no spread to measure: no norms then (gradient_noise says invalid).
  GradientNorms* const norms = noise && batch.size() >= 2 ? &norms_ : nullptr;
  if (norms) {
    norms->per_sample.assign(std::size_t(batch.size()), 0.0);  // keeps its capacity
    norms->total = 0;
    input_norms_.resize(std::size_t(batch.size()));
  }
  forward(params, batch, norms ? input_norms_.data() : nullptr);
  double loss = head(batch, true) / double(batch.size());
  const bool in_place = is_max_aligned(grad.data());
  if (!in_place) grad_copy_.resize(Eigen::Index(grad.size()));
  S* const g = in_place ? grad.data() : grad_copy_.data();
  const std::span<const double> inputs(input_norms_), unknown;
  for (std::size_t i = layers_.size(); i-- > 0;) {
    if (norms) norms->input = i == 0 ? inputs : unknown;  // only the batch's are known
    layers_[i]->backward(params_ + offsets_[i], values_[i], values_[i + 1], grads_[i + 1],
                         g + offsets_[i], i > 0 ? &grads_[i] : nullptr, norms);
  }
  const Eigen::Index n = Eigen::Index(grad.size());
  if (l2_ > 0) {
    const ConstVectorMap<S> p(params_, n);
    VectorMap<S>(g, n) += S(l2_) * p;
    loss += 0.5 * l2_ * double(p.squaredNorm());
  }
  if (noise) {
    double sum = 0;
    double full = 0;
    if (norms) {
      for (double v : norms->per_sample) sum += v;
      full = l2_ > 0 ? squared_norm(g, grad.size()) : norms->total;
    }
    *noise = gradient_noise(batch.size(), sum, norms ? norms->total : 0.0, full);
  }
  if (!in_place) VectorMap<S>(grad.data(), n) = grad_copy_;
  return loss;
}

template <typename S>
void Network<S>::predict(std::span<const S> params, const BatchView& batch,
                         std::span<std::int32_t> out) {
  const Matrix<S>& y = forward(params, batch);
  for (Eigen::Index b = 0; b < y.cols(); ++b) {
    Eigen::Index best = 0;
    if (loss_ == LossKind::kCrossEntropy) y.col(b).maxCoeff(&best);
    out[b] = std::int32_t(best);
  }
}

template <typename S>
Evaluation Network<S>::evaluate(std::span<const S> params, const Dataset& data) {
  constexpr std::int64_t kChunk = 256;
  Evaluation e;
  double loss = 0;
  std::int64_t correct = 0;
  for (std::int64_t first = 0; first < data.size(); first += kChunk) {
    chunk_.resize(std::size_t(std::min(kChunk, data.size() - first)));
    for (std::size_t i = 0; i < chunk_.size(); ++i) chunk_[i] = first + std::int64_t(i);
    BatchView batch{&data, chunk_};
    const Matrix<S>& y = forward(params, batch);
    loss += head(batch, false);
    if (loss_ == LossKind::kCrossEntropy) {
      for (Eigen::Index b = 0; b < y.cols(); ++b) {
        Eigen::Index best;
        y.col(b).maxCoeff(&best);
        correct += best == data.labels[chunk_[b]];
      }
    }
  }
  e.samples = data.size();
  if (e.samples > 0) {
    e.loss = loss / double(e.samples);
    e.accuracy = double(correct) / double(e.samples);
  }
  return e;
}

template <typename S>
double Network<S>::flops_per_sample() const {
  double flops = 0;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    flops += layers_[i]->forward_flops() + layers_[i]->backward_flops(i > 0);
  }
  return flops;
}

namespace {

template <typename S>
using Layers = std::vector<std::unique_ptr<Layer<S>>>;

// Appends conv + ReLU + 2x2 max pool; returns the output shape.
template <typename S>
SampleShape add_conv_block(Layers<S>& layers, SampleShape in, int filters, int kernel,
                           int padding) {
  auto conv = std::make_unique<Conv2d<S>>(in, filters, kernel, padding);
  SampleShape shape = conv->output_shape();
  layers.push_back(std::move(conv));
  layers.push_back(std::make_unique<Relu<S>>(shape.dim()));
  auto pool = std::make_unique<MaxPool<S>>(shape, 2);
  shape = pool->output_shape();
  layers.push_back(std::move(pool));
  return shape;
}

// Dense + ReLU layers of the given widths, then a dense output layer.
template <typename S>
void add_dense_stack(Layers<S>& layers, int inputs, const std::vector<int>& hidden, int outputs) {
  for (int width : hidden) {
    if (width < 1) throw std::invalid_argument("hidden layer widths must be >= 1");
    layers.push_back(std::make_unique<Dense<S>>(inputs, width, 2.0));
    layers.push_back(std::make_unique<Relu<S>>(width));
    inputs = width;
  }
  layers.push_back(std::make_unique<Dense<S>>(inputs, outputs, 1.0));
}

std::string describe(const SampleShape& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width) + "x" +
         std::to_string(s.channels);
}

}  // namespace

template <typename S>
Network<S> build_network(const ModelSpec& spec, const SampleShape& shape, int classes) {
  const bool regression = spec.kind == ModelKind::kLinearRegression;
  if (regression != (classes == 0)) {
    throw std::invalid_argument(
        regression ? "model 'linear_regression' needs regression data (least_squares)"
                   : "model '" + to_string(spec.kind) +
                         "' needs classification data, the data set has no classes");
  }
  if (!regression && classes < 2) throw std::invalid_argument("a classifier needs >= 2 classes");
  auto needs = [&](SampleShape want) {
    if (shape.channels != want.channels || shape.height != want.height ||
        shape.width != want.width) {
      throw std::invalid_argument("model '" + to_string(spec.kind) + "' needs " + describe(want) +
                                  " inputs, the data set has " + describe(shape));
    }
  };
  Layers<S> layers;
  switch (spec.kind) {
    case ModelKind::kLinearRegression:
      layers.push_back(std::make_unique<Dense<S>>(shape.dim(), 1, 1.0));
      break;
    case ModelKind::kLogisticRegression:
      add_dense_stack<S>(layers, shape.dim(), {}, classes);
      break;
    case ModelKind::kMlp:
      add_dense_stack<S>(layers, shape.dim(), spec.hidden, classes);
      break;
    case ModelKind::kLenet: {
      needs({1, 28, 28});
      SampleShape s = add_conv_block(layers, shape, 6, 5, 2);  // 14x14x6
      s = add_conv_block(layers, s, 16, 5, 0);                 // 5x5x16
      add_dense_stack<S>(layers, s.dim(), {120, 84}, classes);
      break;
    }
    case ModelKind::kCifarCnn: {
      needs({3, 32, 32});
      SampleShape s = add_conv_block(layers, shape, 32, 3, 1);  // 16x16x32
      s = add_conv_block(layers, s, 64, 3, 1);                  // 8x8x64
      add_dense_stack<S>(layers, s.dim(), {128}, classes);
      break;
    }
    case ModelKind::kTorchScript:
      throw std::invalid_argument("a TorchScript model is not a hand-written network");
  }
  return Network<S>(std::move(layers),
                    regression ? LossKind::kSquaredError : LossKind::kCrossEntropy, spec.l2);
}

template class Network<float>;
template class Network<double>;
template Network<float> build_network<float>(const ModelSpec&, const SampleShape&, int);
template Network<double> build_network<double>(const ModelSpec&, const SampleShape&, int);

}  // namespace fastk::learning
