// A feed-forward stack of layers with a loss head (softmax cross-entropy or squared error)
// and L2 regularisation, on a flat parameter vector. Templated on the scalar type: the float
// instantiation is what Model wraps; the double one is what gradient checks differentiate.
// Holds the activations of the last batch as scratch, so one instance serves one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "learning/dataset.h"
#include "learning/gradient_noise.h"
#include "learning/layers/layer.h"
#include "learning/model.h"
#include "learning/specs.h"

namespace fastk::learning {

enum class LossKind {
  kCrossEntropy,  // softmax over the outputs, label = class
  kSquaredError,  // one output, loss = (output - target)^2 / 2
};

template <typename S>
class Network {
 public:
  Network(std::vector<std::unique_ptr<Layer<S>>> layers, LossKind loss, double l2);
  Network(const Network& other);
  Network& operator=(const Network&) = delete;

  std::size_t num_parameters() const { return offsets_.back(); }
  int input_dim() const { return layers_.front()->input_dim(); }
  int output_dim() const { return layers_.back()->output_dim(); }
  LossKind loss_kind() const { return loss_; }
  void initialize(std::span<S> params, std::uint64_t seed) const;

  // Mean loss over the batch + l2/2 ||params||^2; grad overwritten. When `noise` is not
  // null, also the gradient-noise estimates of the batch (learning/gradient_noise.h), from
  // per-sample gradient norms gathered in the same backward pass; the gradient is the same,
  // bit for bit, with or without.
  double loss_and_gradient(std::span<const S> params, const BatchView& batch, std::span<S> grad,
                           GradientNoise* noise = nullptr);
  // The outputs (output_dim x batch) of the batch; valid until the next call.
  const Matrix<S>& forward(std::span<const S> params, const BatchView& batch);
  void predict(std::span<const S> params, const BatchView& batch, std::span<std::int32_t> out);
  Evaluation evaluate(std::span<const S> params, const Dataset& data);
  double flops_per_sample() const;

 private:
  // Sum over the batch of the per-sample losses of the outputs; sets dLoss/doutputs
  // (of the mean) in grads_.back() when `gradient`.
  double head(const BatchView& batch, bool gradient);
  // Also writes the squared norm of each input column to `input_norms` when not null.
  const Matrix<S>& forward(std::span<const S> params, const BatchView& batch, double* input_norms);
  void gather(const BatchView& batch, double* input_norms);

  std::vector<std::unique_ptr<Layer<S>>> layers_;
  std::vector<std::size_t> offsets_;  // layer i's parameters: [offsets_[i], offsets_[i+1])
  LossKind loss_;
  double l2_;
  std::vector<Matrix<S>> values_;    // values_[0]: input batch; values_[i+1]: layer i's output
  std::vector<Matrix<S>> grads_;     // grads_[i]: dLoss/dvalues_[i]
  GradientNorms norms_;              // per-sample and total gradient norms, when estimating noise
  std::vector<double> input_norms_;  // squared norms of the batch's inputs, when estimating noise
  // The caller's parameters and our gradient in buffers aligned the same way every time:
  // Eigen's vectorised sums peel to alignment, so a block's address would otherwise change
  // the summation order, and results would differ by an ulp between two callers (the
  // simulator and a real peer) holding the same values at different addresses. A caller's
  // buffer already aligned to EIGEN_MAX_ALIGN_BYTES (the largest packet Eigen peels to) is
  // used in place: it is aligned exactly as these copies are, so the order is the same.
  const S* aligned_params(std::span<const S> params);
  Eigen::Matrix<S, Eigen::Dynamic, 1> params_copy_;
  Eigen::Matrix<S, Eigen::Dynamic, 1> grad_copy_;
  const S* params_ = nullptr;        // the parameters of the last forward(): caller's or the copy
  std::vector<std::int64_t> chunk_;  // row indices of an evaluation chunk
};

// The architecture of `spec` for inputs of `shape` and `classes` outputs (0: regression).
// Throws std::invalid_argument when they do not fit.
template <typename S>
Network<S> build_network(const ModelSpec& spec, const SampleShape& shape, int classes);

}  // namespace fastk::learning
