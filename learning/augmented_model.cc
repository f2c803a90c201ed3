#include "learning/augmented_model.h"

#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "learning/augmentation.h"

namespace fastk::learning {
namespace {

class AugmentedModel final : public Model {
 public:
  AugmentedModel(std::unique_ptr<Model> inner, std::uint64_t seed)
      : inner_(std::move(inner)), seed_(seed) {}
  std::string name() const override { return inner_->name(); }
  std::size_t num_parameters() const override { return inner_->num_parameters(); }
  void initialize(std::span<float> params, std::uint64_t seed) const override {
    inner_->initialize(params, seed);
  }
  using Model::loss_and_gradient;
  double loss_and_gradient(std::span<const float> params, const BatchView& batch,
                           std::span<float> grad, GradientNoise* noise) override {
    return inner_->loss_and_gradient(params, augmented(batch), grad, noise);
  }
  // Predictions and evaluations see the data as they are: augmentation is for training.
  void predict(std::span<const float> params, const BatchView& batch,
               std::span<std::int32_t> out) override {
    inner_->predict(params, batch, out);
  }
  Evaluation evaluate(std::span<const float> params, const Dataset& data) override {
    return inner_->evaluate(params, data);
  }
  double flops_per_sample() const override { return inner_->flops_per_sample(); }
  std::unique_ptr<Model> clone() const override {
    return std::make_unique<AugmentedModel>(inner_->clone(), seed_);
  }

 private:
  // The batch's rows, augmented, as rows 0..n-1 of scratch_. resize() keeps the capacity,
  // so once the largest batch has been seen no call allocates.
  BatchView augmented(const BatchView& batch) {
    const Dataset& data = *batch.data;
    const auto n = std::size_t(batch.size());
    const auto dim = std::size_t(data.dim);
    scratch_.name = data.name;
    scratch_.dim = data.dim;
    scratch_.classes = data.classes;
    scratch_.shape = data.shape;
    scratch_.features.resize(n * dim);
    scratch_.labels.resize(data.labels.empty() ? 0 : n);
    scratch_.targets.resize(data.targets.empty() ? 0 : n);
    sources_.resize(n);
    for (std::size_t b = 0; b < n; ++b) sources_[b] = data.source_row(batch.indices[b]);
    const std::uint64_t key = batch_key(sources_);
    for (std::size_t b = 0; b < n; ++b) {
      const std::int64_t row = batch.indices[b];
      crop_flip(data.row(row), data.shape, draw_crop_flip(seed_, key, sources_[b]),
                {scratch_.features.data() + b * dim, dim});
      if (!data.labels.empty()) scratch_.labels[b] = data.labels[std::size_t(row)];
      if (!data.targets.empty()) scratch_.targets[b] = data.targets[std::size_t(row)];
    }
    if (rows_.size() != n) {
      rows_.resize(n);
      std::iota(rows_.begin(), rows_.end(), std::int64_t{0});
    }
    return {&scratch_, rows_};
  }

  std::unique_ptr<Model> inner_;
  std::uint64_t seed_;
  Dataset scratch_;
  std::vector<std::int64_t> sources_;
  std::vector<std::int64_t> rows_;
};

}  // namespace

std::unique_ptr<Model> with_augmentation(std::unique_ptr<Model> model, const DataSpec& spec,
                                         const SampleShape& shape) {
  if (spec.augment == Augmentation::kNone) return model;
  if (shape.height < 2 || shape.width < 2) {
    throw std::invalid_argument(
        "data.augment = \"" + to_string(spec.augment) + "\" needs images (height and width " +
        "above 1), but the samples of data set '" + to_string(spec.kind) + "' are " +
        std::to_string(shape.channels) + "x" + std::to_string(shape.height) + "x" +
        std::to_string(shape.width) + " (channels x height x width)");
  }
  return std::make_unique<AugmentedModel>(std::move(model), spec.seed);
}

}  // namespace fastk::learning
