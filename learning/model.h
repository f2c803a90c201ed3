// The model interface every peer trains: a flat float parameter vector, a mini-batch loss and
// gradient written into a caller's buffer, and evaluation over a data set. Instances own
// their scratch buffers (so steady-state calls do not allocate) and are single-threaded:
// clone() gives another thread its own instance.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "learning/dataset.h"
#include "learning/gradient_noise.h"
#include "learning/specs.h"

namespace fastk::learning {

struct Evaluation {
  double loss = 0;      // mean loss over the data set (without the L2 term)
  double accuracy = 0;  // fraction of correct predictions; 0 for regression
  std::int64_t samples = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;
  virtual std::size_t num_parameters() const = 0;
  // Seeded initialisation (He/Glorot-style scaled normal weights, zero biases).
  virtual void initialize(std::span<float> params, std::uint64_t seed) const = 0;
  // Mean loss over the batch plus l2/2 * ||params||^2; `grad` (num_parameters) is
  // overwritten with its gradient. When `noise` is not null it receives the batch's
  // gradient-noise estimates (learning/gradient_noise.h: S and G, valid for batches of two
  // samples or more), computed in the same backward pass for a few percent more time; the
  // gradient is the same, bit for bit, with or without. Derived classes override this one
  // and bring the three-argument form into scope (`using Model::loss_and_gradient;`).
  virtual double loss_and_gradient(std::span<const float> params, const BatchView& batch,
                                   std::span<float> grad, GradientNoise* noise) = 0;
  double loss_and_gradient(std::span<const float> params, const BatchView& batch,
                           std::span<float> grad) {
    return loss_and_gradient(params, batch, grad, nullptr);
  }
  // Predicted class (regression: 0) of each row of the batch, written into `out`.
  virtual void predict(std::span<const float> params, const BatchView& batch,
                       std::span<std::int32_t> out) = 0;
  virtual Evaluation evaluate(std::span<const float> params, const Dataset& data) = 0;
  // FLOPs of one forward+backward pass per sample (multiply-add = 2), for benchmarks.
  virtual double flops_per_sample() const = 0;
  virtual std::unique_ptr<Model> clone() const = 0;
};

// Throws std::invalid_argument when the model does not fit the data's shape (e.g. LeNet on
// 32x32x3 inputs, a classifier on regression data).
std::unique_ptr<Model> make_model(const ModelSpec& spec, const SampleShape& shape, int classes);
inline std::unique_ptr<Model> make_model(const ModelSpec& spec, const Dataset& data) {
  return make_model(spec, data.shape, data.classes);
}

}  // namespace fastk::learning
