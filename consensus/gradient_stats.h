// Gradient-noise estimates for DBW-C (docs/protocol.md §5.5.4), as the runtime hands them to
// the protocol with each gradient: learning/gradient_noise.h computes them from per-example
// gradient norms in the gradient's own backward pass.
#pragma once

namespace fastk::consensus {

struct GradientStats {
  double squared_norm = 0;  // G: estimate of ||grad f_i(x)||^2
  double variance = 0;      // S: variance (trace) of the mini-batch gradient
  bool valid = false;       // false when no estimate was made
};

}  // namespace fastk::consensus
