#include "learning/layers/conv2d.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace fastk::learning {

template <typename S>
Conv2d<S>::Conv2d(SampleShape input, int filters, int kernel, int padding)
    : in_(input),
      filters_(filters),
      kernel_(kernel),
      padding_(padding),
      out_height_(input.height + 2 * padding - kernel + 1),
      out_width_(input.width + 2 * padding - kernel + 1) {
  if (out_height_ < 1 || out_width_ < 1) {
    throw std::invalid_argument("convolution kernel " + std::to_string(kernel) +
                                " does not fit a " + std::to_string(input.height) + "x" +
                                std::to_string(input.width) + " input");
  }
}

template <typename S>
void Conv2d<S>::initialize(std::span<S> params, Rng& rng) const {
  const double scale = std::sqrt(2.0 / patch_size());  // He: a ReLU follows
  const std::size_t weights = std::size_t(patch_size()) * filters_;
  for (std::size_t i = 0; i < weights; ++i) params[i] = S(scale * rng.normal());
  for (std::size_t i = weights; i < params.size(); ++i) params[i] = S(0);
}

// Column (c, ky, kx) of P, over rows (oy, ox), is the input channel c shifted by
// (ky - padding, kx - padding); out-of-image positions are zero.
template <typename S>
void Conv2d<S>::im2col(const S* image, S* patches) const {
  const int h = in_.height, w = in_.width;
  for (int c = 0; c < in_.channels; ++c) {
    const S* channel = image + std::size_t(c) * h * w;
    for (int ky = 0; ky < kernel_; ++ky) {
      for (int kx = 0; kx < kernel_; ++kx) {
        for (int oy = 0; oy < out_height_; ++oy) {
          const int y = oy + ky - padding_;
          S* row = patches + std::size_t(oy) * out_width_;
          if (y < 0 || y >= h) {
            for (int ox = 0; ox < out_width_; ++ox) row[ox] = S(0);
            continue;
          }
          for (int ox = 0; ox < out_width_; ++ox) {
            const int x = ox + kx - padding_;
            row[ox] = (x >= 0 && x < w) ? channel[std::size_t(y) * w + x] : S(0);
          }
        }
        patches += positions();
      }
    }
  }
}

template <typename S>
void Conv2d<S>::col2im(const S* patches, S* image) const {
  const int h = in_.height, w = in_.width;
  for (int i = 0; i < in_.dim(); ++i) image[i] = S(0);
  for (int c = 0; c < in_.channels; ++c) {
    S* channel = image + std::size_t(c) * h * w;
    for (int ky = 0; ky < kernel_; ++ky) {
      for (int kx = 0; kx < kernel_; ++kx) {
        for (int oy = 0; oy < out_height_; ++oy) {
          const int y = oy + ky - padding_;
          if (y < 0 || y >= h) continue;
          const S* row = patches + std::size_t(oy) * out_width_;
          for (int ox = 0; ox < out_width_; ++ox) {
            const int x = ox + kx - padding_;
            if (x >= 0 && x < w) channel[std::size_t(y) * w + x] += row[ox];
          }
        }
        patches += positions();
      }
    }
  }
}

template <typename S>
void Conv2d<S>::forward(const S* params, const Matrix<S>& in, Matrix<S>& out) {
  const Eigen::Index batch = in.cols();
  ConstMatrixMap<S> kernels(params, patch_size(), filters_);
  ConstVectorMap<S> bias(params + std::size_t(patch_size()) * filters_, filters_);
  patches_.resize(positions(), Eigen::Index(patch_size()) * batch);
  out.resize(output_dim(), batch);
  for (Eigen::Index b = 0; b < batch; ++b) {
    S* p = patches_.data() + std::size_t(b) * positions() * patch_size();
    im2col(in.col(b).data(), p);
    MatrixMap<S> o(out.col(b).data(), positions(), filters_);
    o.noalias() = ConstMatrixMap<S>(p, positions(), patch_size()) * kernels;
    o.rowwise() += bias.transpose();
  }
}

template <typename S>
void Conv2d<S>::backward(const S* params, const Matrix<S>& in, const Matrix<S>& /*out*/,
                         const Matrix<S>& grad_out, S* grad_params, Matrix<S>* grad_in,
                         GradientNorms* norms) {
  const Eigen::Index batch = in.cols();
  ConstMatrixMap<S> kernels(params, patch_size(), filters_);
  MatrixMap<S> grad_kernels(grad_params, patch_size(), filters_);
  VectorMap<S> grad_bias(grad_params + std::size_t(patch_size()) * filters_, filters_);
  grad_kernels.setZero();
  grad_bias.setZero();
  if (grad_in) grad_in->resize(in_.dim(), batch);
  grad_patches_.resize(positions(), patch_size());
  sample_kernels_.resize(patch_size(), filters_);
  sample_bias_.resize(filters_);
  for (Eigen::Index b = 0; b < batch; ++b) {
    ConstMatrixMap<S> p(patches_.data() + std::size_t(b) * positions() * patch_size(), positions(),
                        patch_size());
    ConstMatrixMap<S> g(grad_out.col(b).data(), positions(), filters_);
    // Sample b's share of the gradient, formed on its own and then added (with or without
    // norms, so that the gradient's bits do not depend on them).
    sample_kernels_.noalias() = p.transpose() * g;
    sample_bias_ = g.colwise().sum().transpose();
    grad_kernels += sample_kernels_;
    grad_bias += sample_bias_;
    if (norms) {
      norms->per_sample[std::size_t(b)] +=
          double(sample_kernels_.squaredNorm()) + double(sample_bias_.squaredNorm());
    }
    if (grad_in) {
      grad_patches_.noalias() = g * kernels.transpose();
      col2im(grad_patches_.data(), grad_in->col(b).data());
    }
  }
  if (norms) norms->total += squared_norm(grad_params, num_parameters());
}

template class Conv2d<float>;
template class Conv2d<double>;

}  // namespace fastk::learning
