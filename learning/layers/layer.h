// One layer of a feed-forward network, templated on the scalar type so that the float models
// peers train and the double models the gradient checks use run the same code.
//
// Activations are column-major matrices with one column per sample (features x batch); a
// sample's features are laid out channels x height x width (CHW). A layer reads its
// parameters from a slice of the model's flat parameter vector and writes its parameter
// gradient into the matching slice of the flat gradient.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "learning/random.h"
#include "third_party/eigen.h"

namespace fastk::learning {

template <typename S>
using Matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <typename S>
using MatrixMap = Eigen::Map<Matrix<S>>;
template <typename S>
using ConstMatrixMap = Eigen::Map<const Matrix<S>>;
template <typename S>
using VectorMap = Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>>;
template <typename S>
using ConstVectorMap = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>;

// What backward() accumulates when the network estimates its gradient noise
// (learning/gradient_noise.h). With u_b the contribution of sample b to the parameter gradient
// (the layer's gradient is sum_b u_b), a layer with parameters adds the squared norm of u_b
// restricted to its parameters to per_sample[b], and the squared norm of its parameter
// gradient to total: over all layers, per_sample sums to U and total is M.
struct GradientNorms {
  std::vector<double> per_sample;  // one entry per sample of the batch
  double total = 0;
  // The squared norms of the layer's input columns when the caller already has them (the
  // network computes those of the batch as it gathers it, where they cost least), else empty.
  std::span<const double> input;
};

// ||x||^2 of n values, in double: float partial sums over blocks short enough that their
// rounding is negligible, so float gradients of 10^5..10^6 values keep their precision at the
// speed of a float sum.
template <typename S>
double squared_norm(const S* x, std::size_t n) {
  constexpr std::size_t kBlock = 1024;
  double sum = 0;
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t size = n - i < kBlock ? n - i : kBlock;
    sum += double(Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(x + i, Eigen::Index(size))
                      .squaredNorm());
  }
  return sum;
}

template <typename S>
class Layer {
 public:
  virtual ~Layer() = default;
  virtual int input_dim() const = 0;
  virtual int output_dim() const = 0;
  virtual std::size_t num_parameters() const { return 0; }
  // Writes the layer's initial parameters (params.size() == num_parameters()).
  virtual void initialize(std::span<S> /*params*/, Rng& /*rng*/) const {}
  // out = f(params, in); `out` is resized to output_dim x batch.
  virtual void forward(const S* params, const Matrix<S>& in, Matrix<S>& out) = 0;
  // Given dLoss/dout, overwrites the parameter gradient `grad_params` and, when `grad_in`
  // is not null, sets dLoss/din (resized to input_dim x batch). `in` and `out` are the
  // values of the last forward call. When `norms` is not null (per_sample sized to the
  // batch), adds the layer's per-sample and total gradient norms to it; the gradient written
  // is the same, bit for bit, either way.
  virtual void backward(const S* params, const Matrix<S>& in, const Matrix<S>& out,
                        const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in,
                        GradientNorms* norms) = 0;
  // Multiply-add FLOPs (x2) per sample of forward, parameter gradient, input gradient.
  virtual double forward_flops() const { return 0; }
  virtual double backward_flops(bool input_gradient) const {
    return input_gradient ? forward_flops() : 0;
  }
  virtual std::unique_ptr<Layer<S>> clone() const = 0;
};

}  // namespace fastk::learning
