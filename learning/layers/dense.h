// Fully connected layer: out = W in + b, W is out x in (column-major in the parameter
// vector), followed by b.
#pragma once

#include "learning/layers/layer.h"

namespace fastk::learning {

template <typename S>
class Dense final : public Layer<S> {
 public:
  // Initial weights ~ N(0, gain / inputs): gain 2 before a ReLU (He), 1 otherwise.
  Dense(int inputs, int outputs, double gain);
  int input_dim() const override { return inputs_; }
  int output_dim() const override { return outputs_; }
  std::size_t num_parameters() const override { return std::size_t(inputs_) * outputs_ + outputs_; }
  void initialize(std::span<S> params, Rng& rng) const override;
  void forward(const S* params, const Matrix<S>& in, Matrix<S>& out) override;
  void backward(const S* params, const Matrix<S>& in, const Matrix<S>& out,
                const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in,
                GradientNorms* norms) override;
  double forward_flops() const override { return 2.0 * inputs_ * outputs_; }
  double backward_flops(bool input_gradient) const override {
    return (input_gradient ? 4.0 : 2.0) * inputs_ * outputs_;
  }
  std::unique_ptr<Layer<S>> clone() const override { return std::make_unique<Dense>(*this); }

 private:
  int inputs_;
  int outputs_;
  double gain_;
};

}  // namespace fastk::learning
