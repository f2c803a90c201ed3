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
  // values of the last forward call.
  virtual void backward(const S* params, const Matrix<S>& in, const Matrix<S>& out,
                        const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in) = 0;
  // Multiply-add FLOPs (x2) per sample of forward, parameter gradient, input gradient.
  virtual double forward_flops() const { return 0; }
  virtual double backward_flops(bool input_gradient) const {
    return input_gradient ? forward_flops() : 0;
  }
  virtual std::unique_ptr<Layer<S>> clone() const = 0;
};

}  // namespace fastk::learning
