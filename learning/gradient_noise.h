// Gradient-noise estimates of one mini-batch, from its per-sample gradients' norms (computed
// inside the ordinary backward pass: learning/layers/layer.h, GradientNorms).
//
// Let n be the batch size, g_b the gradient of sample b's own loss (without the L2 term),
// u_b = g_b / n its contribution to the batch-mean gradient g_bar = sum_b u_b, and
//   U = sum_b ||u_b||^2,   M = ||g_bar||^2,   F = ||g_bar + l2 x||^2  (F = M when l2 = 0).
// With the samples drawn i.i.d. from a distribution whose gradients have mean mu and
// covariance Sigma, s^2 = 1/(n-1) sum_b ||g_b - g_bar||^2 = (n^2 U - n M)/(n-1) is unbiased
// for tr(Sigma), so
//   S = s^2 / n = (n U - M) / (n - 1)      is unbiased for Var(g_bar) = tr(Sigma) / n, and
//   G = max(F - S, 0)                       is unbiased for ||mu + l2 x||^2 before the clip
// (E F = ||mu + l2 x||^2 + Var(g_bar): the L2 term is not random).
// Biases:
// - The clip at 0 biases G upward when the gradient is small against the noise (F - S < 0
//   happens often). S needs no clip: n U >= M (Cauchy-Schwarz), a max(., 0) only removes
//   rounding.
// - A batch drawn without replacement from a finite shard of N samples (BatchSampler) has
//   Var(g_bar) = (N-n)/(N-1) tr(Sigma_N)/n, with Sigma_N the shard's (1/N) covariance, while
//   E S = N/(N-1) tr(Sigma_N)/n: S overstates the actual variance by the factor N/(N-n),
//   and G is low by the difference, E S * n/N (before the clip); both negligible for shards
//   much larger than the batch.
// - U and M are float sums in the float models: S loses relative precision like
//   eps * M / (n U - M) when the samples' gradients nearly agree.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fastk::learning {

struct GradientNoise {
  double squared_norm = 0;  // G: estimate of the squared norm of the expected (full) gradient
  double variance = 0;      // S: estimate of the variance (trace) of the batch-mean gradient
  bool valid = false;       // false for batches of fewer than two samples (or non-finite sums)
};

// S and G from the batch size n and the sums above: U (sum_sample_squared_norms),
// M (mean_squared_norm, data part) and F (full_squared_norm, with the L2 term).
inline GradientNoise gradient_noise(std::int64_t n, double sum_sample_squared_norms,
                                    double mean_squared_norm, double full_squared_norm) {
  GradientNoise noise;
  if (n < 2) return noise;
  const double variance =
      (double(n) * sum_sample_squared_norms - mean_squared_norm) / double(n - 1);
  if (!std::isfinite(variance) || !std::isfinite(full_squared_norm)) return noise;
  noise.variance = std::max(0.0, variance);
  noise.squared_norm = std::max(0.0, full_squared_norm - noise.variance);
  noise.valid = true;
  return noise;
}

}  // namespace fastk::learning
