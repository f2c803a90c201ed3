// [data] augment = "crop_flip": the crop and flip of a known image, the draws, and the model
// decorator: training batches are augmented deterministically (the same batch twice, in a
// clone, or as a peer's shard gives the same bits), evaluation is not.
#include "learning/augmentation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "learning/augmented_model.h"
#include "learning/random.h"

namespace fastk::learning {
namespace {

using ::testing::HasSubstr;

std::vector<float> cropped(const std::vector<float>& in, const SampleShape& shape, CropFlip draw) {
  std::vector<float> out(in.size(), -1.0f);
  crop_flip(in, shape, draw, out);
  return out;
}

// A 3x3 image 1..9 (rows [1 2 3], [4 5 6], [7 8 9]); offsets count in the 11x11 padded image.
TEST(CropFlip, AKnownImageIsCroppedAndFlippedAsComputedByHand) {
  const SampleShape shape{1, 3, 3};
  const std::vector<float> image = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(cropped(image, shape, {.dy = 4, .dx = 4, .flip = false}), image);  // centred
  EXPECT_EQ(cropped(image, shape, {.dy = 4, .dx = 4, .flip = true}),
            (std::vector<float>{3, 2, 1, 6, 5, 4, 9, 8, 7}));
  // Window one row down, one column left: out[y][x] = in[y + 1][x - 1].
  EXPECT_EQ(cropped(image, shape, {.dy = 5, .dx = 3, .flip = false}),
            (std::vector<float>{0, 4, 5, 0, 7, 8, 0, 0, 0}));
  // Cropped first, then mirrored: out[y][x] = in[y - 2][(2 - x) + 2 - 4] = in[y - 2][-x].
  EXPECT_EQ(cropped(image, shape, {.dy = 2, .dx = 2, .flip = true}),
            (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 0, 0}));
  // Entirely in the padding.
  EXPECT_EQ(cropped(image, shape, {.dy = 8, .dx = 0, .flip = false}), std::vector<float>(9, 0));
}

TEST(CropFlip, EveryChannelGetsTheSameWindow) {
  const SampleShape shape{2, 2, 3};
  const std::vector<float> image = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
  // The window one column right ([2 3 0]), then mirrored ([0 3 2]).
  EXPECT_EQ(cropped(image, shape, {.dy = 4, .dx = 5, .flip = true}),
            (std::vector<float>{0, 3, 2, 0, 6, 5, 0, 30, 20, 0, 60, 50}));
}

TEST(CropFlip, DrawsCoverEveryOffsetAndFlipHalfTheTime) {
  std::set<int> dys, dxs;
  int flips = 0;
  const int samples = 4000;
  for (int i = 0; i < samples; ++i) {
    const CropFlip d = draw_crop_flip(7, batch_key(std::vector<std::int64_t>{1, 2}), i);
    dys.insert(d.dy);
    dxs.insert(d.dx);
    flips += d.flip ? 1 : 0;
  }
  EXPECT_EQ(dys, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(dxs, dys);
  EXPECT_NEAR(double(flips) / samples, 0.5, 0.03);
}

// Records what the wrapped model is given: the batch's features and whether it came through
// training or evaluation.
class RecordingModel final : public Model {
 public:
  std::string name() const override { return "recording"; }
  std::size_t num_parameters() const override { return 1; }
  void initialize(std::span<float> params, std::uint64_t) const override { params[0] = 0; }
  using Model::loss_and_gradient;
  double loss_and_gradient(std::span<const float>, const BatchView& batch, std::span<float> grad,
                           GradientNoise*) override {
    gather_features(batch, seen);
    seen.resize(std::size_t(batch.size() * batch.data->dim));
    seen_labels.clear();
    for (std::int64_t i : batch.indices) seen_labels.push_back(batch.data->labels[std::size_t(i)]);
    grad[0] = 0;
    return 0;
  }
  void predict(std::span<const float>, const BatchView& batch, std::span<std::int32_t>) override {
    gather_features(batch, seen);
    seen.resize(std::size_t(batch.size() * batch.data->dim));
  }
  Evaluation evaluate(std::span<const float>, const Dataset& data) override {
    evaluated = &data;
    return {};
  }
  double flops_per_sample() const override { return 0; }
  std::unique_ptr<Model> clone() const override { return std::make_unique<RecordingModel>(); }
  std::vector<float> seen;
  std::vector<std::int32_t> seen_labels;
  const Dataset* evaluated = nullptr;
};

// 12 random 3x4x4 images with labels 0..11 % 10.
Dataset images() {
  Dataset d;
  d.shape = {3, 4, 4};
  d.dim = d.shape.dim();
  d.classes = 10;
  Rng rng(3);
  for (int r = 0; r < 12; ++r) {
    for (int i = 0; i < d.dim; ++i) d.features.push_back(float(rng.uniform()) + 1.0f);
    d.labels.push_back(r % 10);
  }
  return d;
}

DataSpec crop_flip_spec(DatasetKind kind, std::uint64_t seed = 1) {
  DataSpec spec;
  spec.kind = kind;
  spec.augment = Augmentation::kCropFlip;
  spec.seed = seed;
  return spec;
}

struct Wrapped {
  RecordingModel* inner;
  std::unique_ptr<Model> model;
};

Wrapped wrapped(std::uint64_t seed = 5) {
  auto inner = std::make_unique<RecordingModel>();
  RecordingModel* raw = inner.get();
  return {raw, with_augmentation(std::move(inner), crop_flip_spec(DatasetKind::kCifar10, seed),
                                 {3, 4, 4})};
}

std::vector<float> train_on(Wrapped& w, const Dataset& data, std::vector<std::int64_t> batch) {
  std::vector<float> grad(1);
  w.model->loss_and_gradient(std::vector<float>{0}, {&data, batch}, grad);
  return w.inner->seen;
}

TEST(AugmentedModel, TrainingBatchesAreAugmentedByTheirDraws) {
  const Dataset data = images();
  Wrapped w = wrapped();
  const std::vector<std::int64_t> batch = {4, 0, 9};
  const std::vector<float> seen = train_on(w, data, batch);
  ASSERT_EQ(seen.size(), 3u * 48);
  const std::uint64_t key = batch_key(batch);
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const auto row = data.row(batch[b]);
    const std::vector<float> expected =
        cropped({row.begin(), row.end()}, data.shape, draw_crop_flip(5, key, batch[b]));
    EXPECT_EQ(std::vector<float>(seen.begin() + b * 48, seen.begin() + (b + 1) * 48), expected);
  }
  EXPECT_EQ(w.inner->seen_labels, (std::vector<std::int32_t>{4, 0, 9}));
  // Augmented: the batch as stored would have no zero (every pixel is >= 1).
  EXPECT_NE(seen, std::vector<float>(seen.size(), 0.0f));
}

TEST(AugmentedModel, TheSameBatchGivesTheSameBitsInEveryInstance) {
  const Dataset data = images();
  Wrapped w = wrapped();
  const std::vector<float> first = train_on(w, data, {1, 2, 3, 4, 5, 6});
  train_on(w, data, {7, 8});  // calls in between change nothing
  EXPECT_EQ(train_on(w, data, {1, 2, 3, 4, 5, 6}), first);
  Wrapped other = wrapped();
  EXPECT_EQ(train_on(other, data, {1, 2, 3, 4, 5, 6}), first);
  // A clone has its own scratch space and the same draws.
  std::unique_ptr<Model> clone = w.model->clone();
  std::vector<float> grad(1);
  const std::vector<std::int64_t> batch = {1, 2, 3, 4, 5, 6};
  EXPECT_NO_THROW(clone->loss_and_gradient(std::vector<float>{0}, {&data, batch}, grad));
  EXPECT_EQ(train_on(w, data, {1, 2, 3, 4, 5, 6}), first);
}

TEST(AugmentedModel, OtherBatchesAndSeedsAugmentTheSameSampleDifferently) {
  const Dataset data = images();
  Wrapped w = wrapped();
  std::set<std::vector<float>> versions;  // sample 3 in ten different batches
  for (std::int64_t other = 4; other < 12; ++other) {
    const std::vector<float> seen = train_on(w, data, {3, other});
    versions.insert(std::vector<float>(seen.begin(), seen.begin() + 48));
  }
  EXPECT_GE(versions.size(), 5u);  // 162 equally likely draws: a repeat or two at most
  Wrapped reseeded = wrapped(6);
  EXPECT_NE(train_on(reseeded, data, {1, 2, 3, 4, 5, 6}), train_on(w, data, {1, 2, 3, 4, 5, 6}));
}

// A real peer holds only its shard, indexed from 0; the simulator indexes the whole set. The
// draws follow each row's index in the whole set, so both augment alike.
TEST(AugmentedModel, AShardIsAugmentedAsTheWholeSet) {
  const Dataset data = images();
  const std::vector<std::int64_t> mine = {10, 3, 7, 5};
  const Dataset shard = select_rows(data, mine);
  Wrapped w = wrapped();
  EXPECT_EQ(train_on(w, shard, {2, 0, 1}), train_on(w, data, {7, 10, 3}));
}

TEST(AugmentedModel, EvaluationAndPredictionSeeTheDataUnaugmented) {
  const Dataset data = images();
  Wrapped w = wrapped();
  w.model->evaluate(std::vector<float>{0}, data);
  EXPECT_EQ(w.inner->evaluated, &data);
  const std::vector<std::int64_t> batch = {0, 1};
  std::vector<std::int32_t> out(2);
  w.model->predict(std::vector<float>{0}, {&data, batch}, out);
  EXPECT_EQ(w.inner->seen, std::vector<float>(data.features.begin(), data.features.begin() + 96));
  EXPECT_EQ(w.model->name(), "recording");
  EXPECT_EQ(w.model->num_parameters(), 1u);
}

TEST(AugmentedModel, NoneLeavesTheModelAndVectorsAreRefused) {
  auto inner = std::make_unique<RecordingModel>();
  Model* raw = inner.get();
  EXPECT_EQ(with_augmentation(std::move(inner), DataSpec{}, {3, 4, 4}).get(), raw);
  const DataSpec crop = crop_flip_spec(DatasetKind::kGaussianMixture);
  try {
    with_augmentation(std::make_unique<RecordingModel>(), crop, {1, 1, 10});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("data.augment = \"crop_flip\" needs images"));
    EXPECT_THAT(e.what(), HasSubstr("'gaussian_mixture' are 1x1x10"));
  }
}

// With a real model the gradient changes with augmentation and stays reproducible.
TEST(AugmentedModel, ARealModelsGradientIsAugmentedAndReproducible) {
  const Dataset data = images();
  const ModelSpec spec{.kind = ModelKind::kLogisticRegression};
  const DataSpec crop = crop_flip_spec(DatasetKind::kCifar10);
  std::unique_ptr<Model> plain = make_model(spec, data);
  std::unique_ptr<Model> augmented = with_augmentation(make_model(spec, data), crop, data.shape);
  std::vector<float> params(plain->num_parameters());
  plain->initialize(params, 1);
  const std::vector<std::int64_t> batch = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> g_plain(params.size()), g1(params.size()), g2(params.size());
  plain->loss_and_gradient(params, {&data, batch}, g_plain);
  augmented->loss_and_gradient(params, {&data, batch}, g1);
  augmented->clone()->loss_and_gradient(params, {&data, batch}, g2);
  EXPECT_NE(g1, g_plain);
  EXPECT_EQ(g1, g2);
  EXPECT_EQ(augmented->evaluate(params, data).loss, plain->evaluate(params, data).loss);
}

}  // namespace
}  // namespace fastk::learning
