// Rectified linear unit, element-wise: out = max(in, 0).
#pragma once

#include "learning/layers/layer.h"

namespace fastk::learning {

template <typename S>
class Relu final : public Layer<S> {
 public:
  explicit Relu(int dim) : dim_(dim) {}
  int input_dim() const override { return dim_; }
  int output_dim() const override { return dim_; }
  void forward(const S* /*params*/, const Matrix<S>& in, Matrix<S>& out) override {
    out.resize(in.rows(), in.cols());
    out = in.cwiseMax(S(0));
  }
  void backward(const S* /*params*/, const Matrix<S>& in, const Matrix<S>& /*out*/,
                const Matrix<S>& grad_out, S* /*grad_params*/, Matrix<S>* grad_in,
                GradientNorms* /*norms*/) override {
    if (!grad_in) return;
    grad_in->resize(in.rows(), in.cols());
    *grad_in = (in.array() > S(0)).select(grad_out, S(0));
  }
  std::unique_ptr<Layer<S>> clone() const override { return std::make_unique<Relu>(*this); }

 private:
  int dim_;
};

}  // namespace fastk::learning
