// Sampler, learning-rate schedules, SGD updates, and end-to-end training on synthetic data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "learning/data_sources.h"
#include "learning/model.h"
#include "learning/sampler.h"
#include "learning/sgd.h"

namespace fastk::learning {
namespace {

TEST(BatchSampler, EachEpochVisitsEveryIndexOnce) {
  std::vector<std::int64_t> indices = {3, 5, 8, 13, 21, 34};
  BatchSampler sampler(indices, 2, 1);
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<std::int64_t> seen;
    for (int b = 0; b < 3; ++b) {
      auto batch = sampler.next();
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, indices);
  }
  EXPECT_EQ(sampler.batches(), 9);
  EXPECT_DOUBLE_EQ(sampler.epochs(), 3.0);
}

// A checkpoint saves a sampler's state: a sampler restored from it draws what the original
// draws next, across an epoch's reshuffle; a state of other indices is refused.
TEST(BatchSampler, ARestoredStateContinuesTheSameStream) {
  std::vector<std::int64_t> indices(23);
  for (int i = 0; i < 23; ++i) indices[std::size_t(i)] = 100 + i;
  BatchSampler original(indices, 5, 3);
  for (int b = 0; b < 7; ++b) original.next();  // into the second epoch
  const SamplerState saved = original.state();
  BatchSampler restored(indices, 5, 99);  // another seed: its own stream until restored
  restored.restore(saved);
  EXPECT_EQ(restored.batches(), original.batches());
  for (int b = 0; b < 20; ++b) {  // past two more reshuffles
    const auto want = original.next();
    const std::vector<std::int64_t> expected(want.begin(), want.end());
    const auto got = restored.next();
    EXPECT_EQ(std::vector<std::int64_t>(got.begin(), got.end()), expected) << "batch " << b;
  }
  BatchSampler other(std::vector<std::int64_t>{1, 2, 3}, 2, 1);
  EXPECT_THROW(other.restore(saved), std::invalid_argument);
  SamplerState past_end = saved;
  past_end.position = past_end.order.size() + 1;
  EXPECT_THROW(restored.restore(past_end), std::invalid_argument);
  SamplerState zero = saved;
  for (auto& word : zero.rng.s) word = 0;
  EXPECT_THROW(restored.restore(zero), std::invalid_argument);
}

TEST(BatchSampler, SeedDeterminesTheOrder) {
  std::vector<std::int64_t> indices(50);
  for (int i = 0; i < 50; ++i) indices[std::size_t(i)] = i;
  BatchSampler a(indices, 10, 7), b(indices, 10, 7), c(indices, 10, 8);
  std::vector<std::int64_t> xa, xb, xc;
  for (int i = 0; i < 5; ++i) {
    for (auto v : a.next()) xa.push_back(v);
    for (auto v : b.next()) xb.push_back(v);
    for (auto v : c.next()) xc.push_back(v);
  }
  EXPECT_EQ(xa, xb);
  EXPECT_NE(xa, xc);
  EXPECT_THROW(BatchSampler({}, 1, 1), std::invalid_argument);
  EXPECT_THROW(BatchSampler(indices, 0, 1), std::invalid_argument);
}

// A coded peer draws one mini-batch's worth of samples per partition: next(count) hands out
// exactly `count`, continuing the same shuffled epochs, and epochs() counts samples drawn.
TEST(BatchSampler, NextCountDrawsThatManySamplesAndEpochsCountSamples) {
  const std::vector<std::int64_t> indices = {2, 4, 6, 8, 10, 12, 14};
  BatchSampler sampler(indices, 3, 5);
  std::vector<std::int64_t> epoch;
  for (int count : {4, 2, 1}) {
    const auto batch = sampler.next(count);
    ASSERT_EQ(batch.size(), static_cast<std::size_t>(count));
    epoch.insert(epoch.end(), batch.begin(), batch.end());
  }
  std::sort(epoch.begin(), epoch.end());
  EXPECT_EQ(epoch, indices) << "7 samples drawn in pieces are one pass";
  EXPECT_DOUBLE_EQ(sampler.epochs(), 1.0);
  EXPECT_EQ(sampler.batches(), 3);
  EXPECT_EQ(sampler.next().size(), 3u) << "next() still draws batch_size after next(count)";
  EXPECT_DOUBLE_EQ(sampler.epochs(), 10.0 / 7.0);
  EXPECT_EQ(sampler.next(11).size(), 11u);  // more than one epoch in one call
  EXPECT_DOUBLE_EQ(sampler.epochs(), 3.0);
  EXPECT_THROW(sampler.next(0), std::invalid_argument);
  EXPECT_DOUBLE_EQ(sampler.epochs(), 3.0);
}

TEST(Schedule, ConstantStepAndCosine) {
  OptimizerSpec spec{.lr = 0.1};
  EXPECT_DOUBLE_EQ(learning_rate(spec, 500, 1000), 0.1);
  spec.schedule = ScheduleKind::kStep;
  spec.step_iterations = 100;
  spec.gamma = 0.5;
  EXPECT_DOUBLE_EQ(learning_rate(spec, 99, 1000), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(spec, 250, 1000), 0.025);
  spec.schedule = ScheduleKind::kCosine;
  spec.min_lr = 0.02;
  EXPECT_DOUBLE_EQ(learning_rate(spec, 0, 1000), 0.1);
  EXPECT_NEAR(learning_rate(spec, 500, 1000), 0.06, 1e-12);
  EXPECT_NEAR(learning_rate(spec, 1000, 1000), 0.02, 1e-12);
}

// He et al.'s schedule: / 10 at 50% and 75% of the iterations after the warm-up.
TEST(Schedule, MultiStepDividesAtTheMilestones) {
  OptimizerSpec spec{.lr = 0.8, .schedule = ScheduleKind::kMultiStep, .warmup_iterations = 100};
  EXPECT_DOUBLE_EQ(learning_rate(spec, 49, 1100), 0.4);  // the warm-up comes first
  EXPECT_DOUBLE_EQ(learning_rate(spec, 100, 1100), 0.8);
  EXPECT_DOUBLE_EQ(learning_rate(spec, 599, 1100), 0.8);
  EXPECT_NEAR(learning_rate(spec, 600, 1100), 0.08, 1e-15);  // t = 500 of 1000
  EXPECT_NEAR(learning_rate(spec, 849, 1100), 0.08, 1e-15);
  EXPECT_NEAR(learning_rate(spec, 850, 1100), 0.008, 1e-15);
  EXPECT_NEAR(learning_rate(spec, 1099, 1100), 0.008, 1e-15);
  spec.milestones = {0.1};
  spec.gamma = 0.5;
  EXPECT_DOUBLE_EQ(learning_rate(spec, 200, 1100), 0.4);
}

TEST(Sgd, MomentumAndWeightDecayFollowTheirFormulas) {
  OptimizerSpec spec{.lr = 0.5, .momentum = 0.9, .weight_decay = 0.1};
  Sgd sgd(spec, 1, 10);
  std::vector<float> x = {2.0f};
  sgd.step(x, std::vector<float>{1.0f}, 0);  // v = 1, x = 2 - 0.5 * (1 + 0.2) = 1.4
  EXPECT_FLOAT_EQ(x[0], 1.4f);
  sgd.step(x, std::vector<float>{1.0f}, 1);  // v = 1.9, x = 1.4 - 0.5 * (1.9 + 0.14) = 0.38
  EXPECT_FLOAT_EQ(x[0], 0.38f);
}

// A parameter whose gradient stays 0 (a pixel black in every image) has a velocity that only
// decays: it reaches exactly 0 instead of sinking through the subnormal floats, which cost
// about a hundred times more per operation (a real 2-peer run took 40% longer with them).
TEST(Sgd, AVelocityThatOnlyDecaysBecomesZeroNotSubnormal) {
  for (const bool nesterov : {false, true}) {
    Sgd sgd(OptimizerSpec{.lr = 0.1, .momentum = 0.9, .nesterov = nesterov}, 2, 10);
    const std::vector<float> x = {1.0f, 1.0f};
    std::vector<float> u = {1.0f, 1e-3f};
    sgd.direction(x, u);
    bool reached_zero = false;
    for (int k = 0; k < 2000; ++k) {
      u = {0.0f, 0.0f};
      sgd.direction(x, u);
      for (const float value : u) {
        ASSERT_NE(std::fpclassify(value), FP_SUBNORMAL) << "iteration " << k;
      }
      reached_zero = u[0] == 0.0f && u[1] == 0.0f;
    }
    EXPECT_TRUE(reached_zero) << "nesterov " << nesterov;
  }
}

TEST(Sgd, NesterovDescentLooksAhead) {
  OptimizerSpec spec{.lr = 1.0, .momentum = 0.5, .nesterov = true};
  Sgd sgd(spec, 1, 10);
  std::vector<float> x = {0.0f}, delta(1);
  sgd.descent(x, std::vector<float>{2.0f}, 0, delta);  // v = 2, d = 2 + 0.5 * 2
  EXPECT_FLOAT_EQ(delta[0], 3.0f);
  EXPECT_THROW(Sgd(OptimizerSpec{.lr = 0}, 1, 1), std::invalid_argument);
  EXPECT_THROW(Sgd(OptimizerSpec{.momentum = 1.0}, 1, 1), std::invalid_argument);
}

// Trains `spec` with SGD and returns the test evaluation.
Evaluation train(const ModelSpec& spec, const TrainTest& data, int iterations) {
  auto model = make_model(spec, data.train);
  std::vector<float> params(model->num_parameters()), grad(params.size());
  model->initialize(params, 1);
  OptimizerSpec optimizer{.lr = 0.1, .momentum = 0.9, .batch_size = 16};
  Sgd sgd(optimizer, params.size(), iterations);
  std::vector<std::int64_t> all(std::size_t(data.train.size()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = std::int64_t(i);
  BatchSampler sampler(all, optimizer.batch_size, 2);
  for (int k = 0; k < iterations; ++k) {
    model->loss_and_gradient(params, {&data.train, sampler.next()}, grad);
    sgd.step(params, grad, k);
  }
  return model->evaluate(params, data.test);
}

TEST(Training, MlpLearnsAGaussianMixture) {
  TrainTest data = make_gaussian_mixture(1000, 400, 5, 3, 4.0, 3);
  auto model = make_model({.kind = ModelKind::kMlp, .hidden = {16}}, data.train);
  std::vector<float> params(model->num_parameters());
  model->initialize(params, 1);
  const Evaluation before = model->evaluate(params, data.test);
  const Evaluation after = train({.kind = ModelKind::kMlp, .hidden = {16}}, data, 300);
  EXPECT_LT(before.accuracy, 0.7);
  EXPECT_GT(after.accuracy, 0.9);
  EXPECT_LT(after.loss, before.loss);
  EXPECT_EQ(after.samples, 400);
}

TEST(Training, LinearRegressionReachesTheNoiseLevel) {
  TrainTest data = make_least_squares(1000, 400, 4, 0.1, 5);
  const Evaluation e = train({.kind = ModelKind::kLinearRegression}, data, 400);
  EXPECT_LT(e.loss, 0.5 * 0.1 * 0.1 * 2);  // mean (y - t)^2 / 2, noise variance 0.01
}

TEST(Model, InitializationIsSeededAndClonesAreIndependent) {
  TrainTest data = make_gaussian_mixture(20, 5, 4, 3, 3.0, 1);
  auto model = make_model({.kind = ModelKind::kMlp, .hidden = {6}}, data.train);
  EXPECT_EQ(model->num_parameters(), std::size_t(4 * 6 + 6 + 6 * 3 + 3));
  std::vector<float> a(model->num_parameters()), b(a.size()), c(a.size());
  model->initialize(a, 3);
  model->initialize(b, 3);
  model->initialize(c, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto copy = model->clone();
  std::vector<std::int64_t> rows = {0, 1, 2}, other = {3, 4};
  std::vector<float> g1(a.size()), g2(a.size()), g3(a.size());
  const double l1 = model->loss_and_gradient(a, {&data.train, rows}, g1);
  copy->loss_and_gradient(a, {&data.train, other}, g3);  // must not disturb `model`
  const double l2 = copy->loss_and_gradient(a, {&data.train, rows}, g2);
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(g1, g2);
  std::vector<std::int32_t> predicted(3);
  model->predict(a, {&data.train, rows}, predicted);
  for (auto p : predicted) EXPECT_LT(p, 3);
}

TEST(Model, ShapeMismatchesAreExplained) {
  try {
    make_model({.kind = ModelKind::kLenet}, SampleShape{3, 32, 32}, 10);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "model 'lenet' needs 28x28x1 inputs, the data set has 32x32x3");
  }
  EXPECT_THROW(make_model({.kind = ModelKind::kLinearRegression}, SampleShape{1, 1, 3}, 4),
               std::invalid_argument);
  EXPECT_THROW(make_model({.kind = ModelKind::kMlp}, SampleShape{1, 1, 3}, 0),
               std::invalid_argument);
  auto model = make_model({}, SampleShape{1, 1, 3}, 2);
  std::vector<float> wrong(model->num_parameters() + 1);
  EXPECT_THROW(model->initialize(wrong, 1), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::learning
