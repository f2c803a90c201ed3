#include "learning/layers/max_pool.h"

#include <stdexcept>
#include <string>

namespace fastk::learning {

template <typename S>
MaxPool<S>::MaxPool(SampleShape input, int size) : in_(input), size_(size) {
  if (size < 1 || input.height < size || input.width < size) {
    throw std::invalid_argument("max pooling window " + std::to_string(size) + " does not fit a " +
                                std::to_string(input.height) + "x" + std::to_string(input.width) +
                                " input");
  }
}

template <typename S>
void MaxPool<S>::forward(const S* /*params*/, const Matrix<S>& in, Matrix<S>& out) {
  const SampleShape o = output_shape();
  const Eigen::Index batch = in.cols();
  out.resize(o.dim(), batch);
  argmax_.resize(std::size_t(o.dim()) * batch);
  std::int32_t* arg = argmax_.data();
  for (Eigen::Index b = 0; b < batch; ++b) {
    const S* x = in.col(b).data();
    S* y = out.col(b).data();
    for (int c = 0; c < o.channels; ++c) {
      for (int oy = 0; oy < o.height; ++oy) {
        for (int ox = 0; ox < o.width; ++ox) {
          int best = (c * in_.height + oy * size_) * in_.width + ox * size_;
          for (int dy = 0; dy < size_; ++dy) {
            for (int dx = 0; dx < size_; ++dx) {
              const int i = (c * in_.height + oy * size_ + dy) * in_.width + ox * size_ + dx;
              if (x[i] > x[best]) best = i;
            }
          }
          *y++ = x[best];
          *arg++ = best;
        }
      }
    }
  }
}

template <typename S>
void MaxPool<S>::backward(const S* /*params*/, const Matrix<S>& in, const Matrix<S>& /*out*/,
                          const Matrix<S>& grad_out, S* /*grad_params*/, Matrix<S>* grad_in,
                          GradientNorms* /*norms*/) {
  if (!grad_in) return;
  grad_in->setZero(in.rows(), in.cols());
  const std::int32_t* arg = argmax_.data();
  for (Eigen::Index b = 0; b < in.cols(); ++b) {
    S* gx = grad_in->col(b).data();
    const S* gy = grad_out.col(b).data();
    for (Eigen::Index i = 0; i < grad_out.rows(); ++i) gx[*arg++] += gy[i];
  }
}

template class MaxPool<float>;
template class MaxPool<double>;

}  // namespace fastk::learning
