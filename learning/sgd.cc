#include "learning/sgd.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "third_party/eigen.h"

namespace fastk::learning {

double learning_rate(const OptimizerSpec& spec, std::int64_t iteration,
                     std::int64_t total_iterations) {
  switch (spec.schedule) {
    case ScheduleKind::kConstant:
      return spec.lr;
    case ScheduleKind::kStep:
      return spec.lr * std::pow(spec.gamma, double(iteration / std::max<std::int64_t>(
                                                                   spec.step_iterations, 1)));
    case ScheduleKind::kCosine: {
      const double progress = std::clamp(
          double(iteration) / double(std::max<std::int64_t>(total_iterations, 1)), 0.0, 1.0);
      return spec.min_lr +
             (spec.lr - spec.min_lr) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
    }
  }
  return spec.lr;
}

Sgd::Sgd(const OptimizerSpec& spec, std::size_t num_parameters, std::int64_t total_iterations)
    : spec_(spec), total_iterations_(total_iterations), delta_(num_parameters) {
  if (!(spec.lr > 0)) throw std::invalid_argument("optimizer.lr must be > 0");
  if (!(spec.momentum >= 0 && spec.momentum < 1)) {
    throw std::invalid_argument("optimizer.momentum must be in [0, 1)");
  }
  if (spec.momentum > 0) velocity_.assign(num_parameters, 0.0f);
}

void Sgd::descent(std::span<const float> params, std::span<const float> grad,
                  std::int64_t iteration, std::span<float> delta) {
  if (params.size() != delta_.size() || grad.size() != delta_.size() ||
      delta.size() != delta_.size()) {
    throw std::invalid_argument("sgd: vectors must have " + std::to_string(delta_.size()) +
                                " entries");
  }
  using Vec = Eigen::Map<Eigen::VectorXf>;
  using ConstVec = Eigen::Map<const Eigen::VectorXf>;
  const Eigen::Index n = Eigen::Index(delta.size());
  ConstVec p(params.data(), n), g(grad.data(), n);
  Vec d(delta.data(), n);
  const float lr = float(learning_rate(spec_, iteration, total_iterations_));
  const float mu = float(spec_.momentum);
  if (velocity_.empty()) {
    d = lr * g;
  } else {
    Vec v(velocity_.data(), n);
    v = mu * v + g;
    if (spec_.nesterov) {
      d = lr * (g + mu * v);
    } else {
      d = lr * v;
    }
  }
  if (spec_.weight_decay > 0) d += (lr * float(spec_.weight_decay)) * p;
}

void Sgd::step(std::span<float> params, std::span<const float> grad, std::int64_t iteration) {
  descent(params, grad, iteration, delta_);
  Eigen::Map<Eigen::VectorXf>(params.data(), Eigen::Index(params.size())) -=
      Eigen::Map<const Eigen::VectorXf>(delta_.data(), Eigen::Index(delta_.size()));
}

}  // namespace fastk::learning
