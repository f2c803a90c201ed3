// Stochastic gradient descent on flat parameter vectors: learning-rate schedules, heavy-ball
// or Nesterov momentum, decoupled weight decay.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "learning/specs.h"

namespace fastk::learning {

// The learning rate at `iteration` (0-based) of a run of `total_iterations` (kCosine).
double learning_rate(const OptimizerSpec& spec, std::int64_t iteration,
                     std::int64_t total_iterations);

class Sgd {
 public:
  // Throws std::invalid_argument on out-of-range spec values (lr <= 0, momentum not in [0,1)).
  Sgd(const OptimizerSpec& spec, std::size_t num_parameters, std::int64_t total_iterations);
  // The update `delta` such that params_next = params - delta:
  //   v = momentum * v + grad;  d = nesterov ? grad + momentum * v : v
  //   delta = lr(iteration) * (d + weight_decay * params)
  // Advances the momentum state. Decentralized peers mix first and then subtract delta.
  void descent(std::span<const float> params, std::span<const float> grad, std::int64_t iteration,
               std::span<float> delta);
  // params -= descent(params, grad, iteration).
  void step(std::span<float> params, std::span<const float> grad, std::int64_t iteration);
  const OptimizerSpec& spec() const { return spec_; }

 private:
  OptimizerSpec spec_;
  std::int64_t total_iterations_;
  std::vector<float> velocity_;
  std::vector<float> delta_;
};

}  // namespace fastk::learning
