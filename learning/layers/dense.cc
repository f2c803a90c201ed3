#include "learning/layers/dense.h"

#include <cmath>

namespace fastk::learning {

template <typename S>
Dense<S>::Dense(int inputs, int outputs, double gain)
    : inputs_(inputs), outputs_(outputs), gain_(gain) {}

template <typename S>
void Dense<S>::initialize(std::span<S> params, Rng& rng) const {
  const double scale = std::sqrt(gain_ / inputs_);
  const std::size_t weights = std::size_t(inputs_) * outputs_;
  for (std::size_t i = 0; i < weights; ++i) params[i] = S(scale * rng.normal());
  for (std::size_t i = weights; i < params.size(); ++i) params[i] = S(0);
}

template <typename S>
void Dense<S>::forward(const S* params, const Matrix<S>& in, Matrix<S>& out) {
  ConstMatrixMap<S> w(params, outputs_, inputs_);
  ConstVectorMap<S> b(params + std::size_t(inputs_) * outputs_, outputs_);
  out.resize(outputs_, in.cols());
  out.noalias() = w * in;
  out.colwise() += b;
}

template <typename S>
void Dense<S>::backward(const S* params, const Matrix<S>& in, const Matrix<S>& /*out*/,
                        const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in,
                        GradientNorms* norms) {
  MatrixMap<S> grad_w(grad_params, outputs_, inputs_);
  VectorMap<S> grad_b(grad_params + std::size_t(inputs_) * outputs_, outputs_);
  grad_w.noalias() = grad_out * in.transpose();
  grad_b = grad_out.rowwise().sum();
  if (norms) {
    // Sample b's share of the gradient is (delta_b a_b^T, delta_b), delta = grad_out (the
    // mean loss's 1/n included), a = in: its squared norm is ||delta_b||^2 (||a_b||^2 + 1).
    const bool known = norms->input.size() == std::size_t(in.cols());
    for (Eigen::Index b = 0; b < in.cols(); ++b) {
      const double input = known ? norms->input[std::size_t(b)] : double(in.col(b).squaredNorm());
      norms->per_sample[std::size_t(b)] += double(grad_out.col(b).squaredNorm()) * (input + 1.0);
    }
    norms->total += squared_norm(grad_params, num_parameters());
  }
  if (grad_in) {
    ConstMatrixMap<S> w(params, outputs_, inputs_);
    grad_in->resize(inputs_, grad_out.cols());
    grad_in->noalias() = w.transpose() * grad_out;
  }
}

template class Dense<float>;
template class Dense<double>;

}  // namespace fastk::learning
