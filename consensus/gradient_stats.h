// Gradient-noise estimates for DBW-C (docs/protocol.md §5.5.4): from r >= 2 micro-batch
// gradients g_1..g_r of a peer's own mini-batch,
//   g_bar = mean g_m,   S = (1/(r(r-1))) sum ||g_m - g_bar||^2   (variance of g_bar),
//   G = max(||g_bar||^2 - S, 0)                                    (unbiased before the clip).
// A runtime that wants the adaptive policy computes its gradient as the mean of micro-batch
// gradients through this accumulator and hands both to the protocol.
#pragma once

#include <span>
#include <vector>

namespace fastk::consensus {

struct GradientStats {
  double squared_norm = 0;  // G: estimate of ||grad f_i(x)||^2
  double variance = 0;      // S: variance (trace) of the mini-batch gradient
  bool valid = false;       // false when fewer than two micro-batches were seen
};

class MicroBatchAccumulator {
 public:
  explicit MicroBatchAccumulator(std::size_t parameters) : sum_(parameters, 0.0) {}
  void add(std::span<const float> micro_gradient);
  int count() const { return count_; }
  // Mean of the micro-batch gradients, written to `mean` (size = parameters).
  GradientStats finish(std::span<float> mean) const;

 private:
  std::vector<double> sum_;
  double sum_squared_norms_ = 0;
  int count_ = 0;
};

}  // namespace fastk::consensus
