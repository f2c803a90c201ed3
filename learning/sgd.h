// Stochastic gradient descent on flat parameter vectors: learning-rate schedules, heavy-ball
// or Nesterov momentum, decoupled weight decay.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "learning/specs.h"

namespace fastk::learning {

// The learning rate at `iteration` (0-based) of a run of `total_iterations` (kCosine):
// the warm-up, then the schedule.
double learning_rate(const OptimizerSpec& spec, std::int64_t iteration,
                     std::int64_t total_iterations);

// Whether a step needs more than the gradient and the rate (momentum or weight decay).
bool has_direction_state(const OptimizerSpec& spec);

class Sgd {
 public:
  // Throws std::invalid_argument on out-of-range spec values (lr <= 0, momentum not in [0,1)).
  // Holds a model-sized momentum vector when momentum > 0.
  Sgd(const OptimizerSpec& spec, std::size_t num_parameters, std::int64_t total_iterations);
  // The update `delta` such that params_next = params - delta: learning_rate(iteration) times
  // direction(params, grad). Advances the momentum state.
  void descent(std::span<const float> params, std::span<const float> grad, std::int64_t iteration,
               std::span<float> delta);
  // The step without its rate, in place: grad becomes
  //   v = momentum * v + grad;  u = (nesterov ? grad + momentum * v : v) + weight_decay * params
  // so that the step is learning_rate(iteration) * u. Advances the momentum state. This is
  // what decentralized peers apply after (or before) mixing (docs/protocol.md §3.7).
  void direction(std::span<const float> params, std::span<float> grad);
  // params -= descent(params, grad, iteration).
  void step(std::span<float> params, std::span<const float> grad, std::int64_t iteration);
  const OptimizerSpec& spec() const { return spec_; }

 private:
  OptimizerSpec spec_;
  std::int64_t total_iterations_;
  std::size_t num_parameters_;
  std::vector<float> velocity_;
  std::vector<float> delta_;
};

}  // namespace fastk::learning
