// Max pooling over non-overlapping size x size windows of each channel (stride = size;
// trailing rows/columns that do not fill a window are dropped). Backward routes each output
// gradient to the input that was the maximum.
#pragma once

#include <cstdint>
#include <vector>

#include "learning/dataset.h"
#include "learning/layers/layer.h"

namespace fastk::learning {

template <typename S>
class MaxPool final : public Layer<S> {
 public:
  MaxPool(SampleShape input, int size);
  SampleShape output_shape() const { return {in_.channels, in_.height / size_, in_.width / size_}; }
  int input_dim() const override { return in_.dim(); }
  int output_dim() const override { return output_shape().dim(); }
  void forward(const S* params, const Matrix<S>& in, Matrix<S>& out) override;
  void backward(const S* params, const Matrix<S>& in, const Matrix<S>& out,
                const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in,
                GradientNorms* norms) override;
  std::unique_ptr<Layer<S>> clone() const override { return std::make_unique<MaxPool>(*this); }

 private:
  SampleShape in_;
  int size_;
  std::vector<std::int32_t> argmax_;  // per output element of the batch: input row index
};

}  // namespace fastk::learning
