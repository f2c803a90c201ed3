#include "learning/sgd.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "third_party/eigen.h"

namespace fastk::learning {

namespace {
// Far below any step that moves a float32 model, far above the subnormals (below 1.2e-38).
constexpr float kSmallestVelocity = 1e-30f;
}  // namespace

double learning_rate(const OptimizerSpec& spec, std::int64_t iteration,
                     std::int64_t total_iterations) {
  const std::int64_t warmup = std::max<std::int64_t>(spec.warmup_iterations, 0);
  if (iteration < warmup) return spec.lr * double(iteration + 1) / double(warmup);
  const std::int64_t t = iteration - warmup;
  switch (spec.schedule) {
    case ScheduleKind::kConstant:
      return spec.lr;
    case ScheduleKind::kStep:
      return spec.lr *
             std::pow(spec.gamma, double(t / std::max<std::int64_t>(spec.step_iterations, 1)));
    case ScheduleKind::kMultiStep: {
      const double span = double(std::max<std::int64_t>(total_iterations - warmup, 1));
      int passed = 0;
      for (double m : spec.milestones) passed += double(t) >= m * span ? 1 : 0;
      return spec.lr * std::pow(spec.gamma, double(passed));
    }
    case ScheduleKind::kCosine: {
      const double span = double(std::max<std::int64_t>(total_iterations - warmup, 1));
      const double progress = std::clamp(double(t) / span, 0.0, 1.0);
      return spec.min_lr +
             (spec.lr - spec.min_lr) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
    }
  }
  return spec.lr;
}

bool has_direction_state(const OptimizerSpec& spec) {
  return spec.momentum != 0 || spec.weight_decay != 0;
}

Sgd::Sgd(const OptimizerSpec& spec, std::size_t num_parameters, std::int64_t total_iterations)
    : spec_(spec), total_iterations_(total_iterations), num_parameters_(num_parameters) {
  if (!(spec.lr > 0)) throw std::invalid_argument("optimizer.lr must be > 0");
  if (!(spec.momentum >= 0 && spec.momentum < 1)) {
    throw std::invalid_argument("optimizer.momentum must be in [0, 1)");
  }
  if (spec.momentum > 0) velocity_.assign(num_parameters, 0.0f);
}

void Sgd::direction(std::span<const float> params, std::span<float> grad) {
  if (params.size() != num_parameters_ || grad.size() != num_parameters_) {
    throw std::invalid_argument("sgd: vectors must have " + std::to_string(num_parameters_) +
                                " entries");
  }
  // Plain loops, compiled without fused multiply-adds (learning/CMakeLists.txt): the step's
  // bits depend on its inputs only, as the mix's do (docs/protocol.md §3.6).
  const float mu = float(spec_.momentum);
  const float decay = float(spec_.weight_decay);
  float* __restrict u = grad.data();
  const float* __restrict p = params.data();
  if (!velocity_.empty()) {
    float* __restrict v = velocity_.data();
    // A velocity that only decays (its parameter's gradient is 0, like the weights of a
    // pixel that is black in every image) would sink through the subnormal floats, where
    // each operation costs about a hundred times more: it is set to 0 on the way.
    for (std::size_t i = 0; i < num_parameters_; ++i) {
      const float next = mu * v[i] + u[i];
      v[i] = std::abs(next) < kSmallestVelocity ? 0.0f : next;
    }
    if (spec_.nesterov) {
      for (std::size_t i = 0; i < num_parameters_; ++i) u[i] += mu * v[i];
    } else {
      std::copy(velocity_.begin(), velocity_.end(), grad.begin());
    }
  }
  if (decay > 0) {
    for (std::size_t i = 0; i < num_parameters_; ++i) u[i] += decay * p[i];
  }
}

void Sgd::descent(std::span<const float> params, std::span<const float> grad,
                  std::int64_t iteration, std::span<float> delta) {
  if (grad.size() != num_parameters_ || delta.size() != num_parameters_) {
    throw std::invalid_argument("sgd: vectors must have " + std::to_string(num_parameters_) +
                                " entries");
  }
  std::copy(grad.begin(), grad.end(), delta.begin());
  direction(params, delta);
  const float lr = float(learning_rate(spec_, iteration, total_iterations_));
  Eigen::Map<Eigen::VectorXf>(delta.data(), Eigen::Index(delta.size())) *= lr;
}

void Sgd::step(std::span<float> params, std::span<const float> grad, std::int64_t iteration) {
  delta_.resize(num_parameters_);  // only step() needs it: peers use direction()
  descent(params, grad, iteration, delta_);
  Eigen::Map<Eigen::VectorXf>(params.data(), Eigen::Index(params.size())) -=
      Eigen::Map<const Eigen::VectorXf>(delta_.data(), Eigen::Index(delta_.size()));
}

}  // namespace fastk::learning
