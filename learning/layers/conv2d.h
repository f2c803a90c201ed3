// 2-D convolution (cross-correlation), stride 1, zero padding, as im2col + matrix product.
//
// For each sample, im2col builds P (positions x C*k*k): row (oy, ox) holds the input patch
// under the kernel at that output position. With the filters stored as K (C*k*k x F), one
// column per filter, the output in CHW layout is the column-major positions x F matrix
// P K (+ bias per column). Backward: dK = sum_b P_b^T dOut_b, dP = dOut K^T folded back
// into the input (col2im).
#pragma once

#include "learning/dataset.h"
#include "learning/layers/layer.h"

namespace fastk::learning {

template <typename S>
class Conv2d final : public Layer<S> {
 public:
  Conv2d(SampleShape input, int filters, int kernel, int padding);
  SampleShape output_shape() const { return {filters_, out_height_, out_width_}; }
  int input_dim() const override { return in_.dim(); }
  int output_dim() const override { return output_shape().dim(); }
  std::size_t num_parameters() const override {
    return std::size_t(patch_size()) * filters_ + filters_;
  }
  void initialize(std::span<S> params, Rng& rng) const override;
  void forward(const S* params, const Matrix<S>& in, Matrix<S>& out) override;
  void backward(const S* params, const Matrix<S>& in, const Matrix<S>& out,
                const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in,
                GradientNorms* norms) override;
  double forward_flops() const override { return 2.0 * positions() * patch_size() * filters_; }
  double backward_flops(bool input_gradient) const override {
    return (input_gradient ? 2.0 : 1.0) * forward_flops();
  }
  std::unique_ptr<Layer<S>> clone() const override { return std::make_unique<Conv2d>(*this); }

 private:
  int patch_size() const { return in_.channels * kernel_ * kernel_; }
  int positions() const { return out_height_ * out_width_; }
  void im2col(const S* image, S* patches) const;
  void col2im(const S* patches, S* image) const;

  SampleShape in_;
  int filters_;
  int kernel_;
  int padding_;
  int out_height_;
  int out_width_;
  Matrix<S> patches_;         // positions x (patch_size * batch): every sample's P
  Matrix<S> grad_patches_;    // positions x patch_size
  Matrix<S> sample_kernels_;  // patch_size x filters: one sample's dK
  Eigen::Matrix<S, Eigen::Dynamic, 1> sample_bias_;  // filters: one sample's dbias
};

}  // namespace fastk::learning
