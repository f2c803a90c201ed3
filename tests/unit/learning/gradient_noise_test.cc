// The gradient-noise estimates computed in the backward pass (learning/gradient_noise.h):
// each layer's per-sample norms against per-sample backward passes, every model's S and G
// against per-sample gradients formed one sample at a time, the gradient's bits with and
// without estimation, unbiasedness over many batches, and batches too small to estimate from.
#include "learning/gradient_noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "learning/layers/conv2d.h"
#include "learning/layers/dense.h"
#include "learning/layers/max_pool.h"
#include "learning/layers/relu.h"
#include "learning/model.h"
#include "learning/network.h"
#include "tests/unit/learning/test_data.h"

namespace fastk::learning {
namespace {

double sum_of_squares(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x * x;
  return sum;
}

// Backward on a batch with norms, against a backward pass per sample: per_sample[b] must be
// the squared norm of sample b's parameter gradient, total that of the batch gradient.
void check_layer_norms(Layer<double>& layer, int batch, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> params(layer.num_parameters());
  for (double& p : params) p = rng.normal();
  Matrix<double> in(layer.input_dim(), batch), grad_out(layer.output_dim(), batch), out, grad_in;
  for (Eigen::Index i = 0; i < in.size(); ++i) in.data()[i] = rng.normal();
  for (Eigen::Index i = 0; i < grad_out.size(); ++i) grad_out.data()[i] = rng.normal();

  GradientNorms norms;
  norms.per_sample.assign(std::size_t(batch), 0.0);
  norms.total = 0.5;  // layers add to what is there
  // One buffer for both: Eigen's sums peel to alignment, so the bits depend on the address.
  std::vector<double> grad(params.size());
  layer.forward(params.data(), in, out);
  layer.backward(params.data(), in, out, grad_out, grad.data(), &grad_in, nullptr);
  const std::vector<double> plain = grad;
  layer.backward(params.data(), in, out, grad_out, grad.data(), &grad_in, &norms);
  EXPECT_EQ(std::memcmp(grad.data(), plain.data(), grad.size() * sizeof(double)), 0);
  EXPECT_NEAR(norms.total, 0.5 + sum_of_squares(grad), 1e-12 * (1 + norms.total));

  for (int b = 0; b < batch; ++b) {
    Matrix<double> in_b = in.col(b), grad_out_b = grad_out.col(b), out_b, grad_in_b;
    std::vector<double> grad_b(params.size());
    layer.forward(params.data(), in_b, out_b);
    layer.backward(params.data(), in_b, out_b, grad_out_b, grad_b.data(), &grad_in_b, nullptr);
    const double expected = sum_of_squares(grad_b);
    EXPECT_NEAR(norms.per_sample[std::size_t(b)], expected, 1e-12 * (1 + expected))
        << "sample " << b;
    if (params.empty()) {
      EXPECT_EQ(norms.per_sample[std::size_t(b)], 0.0);
    }
  }
}

TEST(LayerGradientNorms, Dense) {
  Dense<double> layer(5, 4, 1.0);
  check_layer_norms(layer, 3, 1);
}

TEST(LayerGradientNorms, ConvolutionWithPadding) {
  Conv2d<double> layer({2, 6, 5}, 3, 3, 1);
  check_layer_norms(layer, 3, 2);
}

TEST(LayerGradientNorms, ConvolutionWithoutPadding) {
  Conv2d<double> layer({3, 5, 6}, 2, 2, 0);
  check_layer_norms(layer, 3, 3);
}

TEST(LayerGradientNorms, LayersWithoutParametersAddNothing) {
  Relu<double> relu(7);
  check_layer_norms(relu, 3, 4);
  MaxPool<double> pool({2, 5, 4}, 2);
  check_layer_norms(pool, 3, 5);
}

// S and G by brute force: each sample's gradient from a one-sample call (minus its L2 term),
// u_b = g_b / n, U = sum ||u_b||^2, M = ||sum u_b||^2, F = ||batch gradient||^2.
struct BruteForce {
  double variance = 0;
  double squared_norm = 0;
};

template <typename S, typename Call>
BruteForce brute_force(std::size_t parameters, std::span<const S> params, double l2,
                       const Dataset& data, std::span<const std::int64_t> rows, Call call) {
  const double n = double(rows.size());
  std::vector<double> mean(parameters, 0.0);
  double u = 0;
  std::vector<S> grad(parameters);
  for (std::size_t b = 0; b < rows.size(); ++b) {
    call(BatchView{&data, rows.subspan(b, 1)}, std::span<S>(grad), nullptr);
    double norm = 0;
    for (std::size_t i = 0; i < parameters; ++i) {
      const double share = (double(grad[i]) - l2 * double(params[i])) / n;
      norm += share * share;
      mean[i] += share;
    }
    u += norm;
  }
  const double m = sum_of_squares(mean);
  call(BatchView{&data, rows}, std::span<S>(grad), nullptr);
  double full = 0;
  for (S v : grad) full += double(v) * double(v);
  BruteForce expected;
  expected.variance = (n * u - m) / (n - 1);
  expected.squared_norm = std::max(0.0, full - expected.variance);
  return expected;
}

struct ModelCase {
  std::string name;
  ModelSpec spec;
  SampleShape shape;
  int classes;
};

// Seven samples of the case's shape, features around 1 and all of the same class
// (regression: targets near 3), so that the mean gradient stands out of the noise and G is
// not clipped (nor tested for 0).
Dataset case_data(const ModelCase& c, std::uint64_t seed) {
  Dataset data = testing::random_dataset(c.shape, c.classes, 7, seed);
  for (auto& feature : data.features) feature += 1;
  for (auto& label : data.labels) label = 1;
  for (auto& target : data.targets) target = 3 + 0.1f * target;
  return data;
}

std::vector<ModelCase> model_cases() {
  return {
      {"logistic_regression", {.kind = ModelKind::kLogisticRegression, .l2 = 0.01}, {1, 1, 12}, 4},
      {"mlp", {.kind = ModelKind::kMlp, .hidden = {16, 8}, .l2 = 0.01}, {1, 1, 12}, 5},
      // 53 inputs: the network's one-pass copy and norm of the batch takes every path
      // (two vectors at a time, one, the scalar tail) on any vector width up to 512 bits.
      {"mlp_without_l2", {.kind = ModelKind::kMlp, .hidden = {16}}, {1, 1, 53}, 3},
      {"wide_logistic_regression", {.kind = ModelKind::kLogisticRegression}, {1, 1, 53}, 3},
      {"lenet", {.kind = ModelKind::kLenet, .l2 = 0.001}, {1, 28, 28}, 10},
      {"cifar_cnn", {.kind = ModelKind::kCifarCnn, .l2 = 0.001}, {3, 32, 32}, 10},
      {"linear_regression", {.kind = ModelKind::kLinearRegression, .l2 = 0.01}, {1, 1, 9}, 0},
  };
}

void expect_relative(double actual, double expected, double tolerance, const std::string& what) {
  EXPECT_NEAR(actual, expected, tolerance * std::abs(expected)) << what;
}

TEST(GradientNoise, FloatModelsMatchPerSampleGradients) {
  for (const ModelCase& c : model_cases()) {
    SCOPED_TRACE(c.name);
    Dataset data = case_data(c, 21);
    auto model = make_model(c.spec, data);
    std::vector<float> params(model->num_parameters()), grad(params.size());
    model->initialize(params, 3);
    Rng rng(4);
    for (float& p : params) p += float(0.05 * rng.normal());  // biases away from zero, too
    const std::vector<std::int64_t> rows = {3, 0, 6, 1, 4};
    GradientNoise noise;
    model->loss_and_gradient(params, {&data, rows}, grad, &noise);
    ASSERT_TRUE(noise.valid);
    const BruteForce expected =
        brute_force<float>(params.size(), std::span<const float>(params), c.spec.l2, data, rows,
                           [&](const BatchView& batch, std::span<float> g, GradientNoise* out) {
                             model->loss_and_gradient(params, batch, g, out);
                           });
    EXPECT_GT(expected.variance, 0);
    EXPECT_GT(expected.squared_norm, 0);
    expect_relative(noise.variance, expected.variance, 1e-5, "S");
    expect_relative(noise.squared_norm, expected.squared_norm, 1e-5, "G");
  }
}

TEST(GradientNoise, DoubleNetworksMatchPerSampleGradients) {
  for (const ModelCase& c : model_cases()) {
    SCOPED_TRACE(c.name);
    Dataset data = case_data(c, 22);
    Network<double> net = build_network<double>(c.spec, c.shape, c.classes);
    std::vector<double> params(net.num_parameters()), grad(params.size());
    net.initialize(params, 5);
    Rng rng(6);
    for (double& p : params) p += 0.05 * rng.normal();
    const std::vector<std::int64_t> rows = {2, 5, 0, 4, 6};
    GradientNoise noise;
    net.loss_and_gradient(params, {&data, rows}, grad, &noise);
    ASSERT_TRUE(noise.valid);
    const BruteForce expected =
        brute_force<double>(params.size(), std::span<const double>(params), c.spec.l2, data, rows,
                            [&](const BatchView& batch, std::span<double> g, GradientNoise* out) {
                              net.loss_and_gradient(params, batch, g, out);
                            });
    EXPECT_GT(expected.variance, 0);
    EXPECT_GT(expected.squared_norm, 0);
    expect_relative(noise.variance, expected.variance, 1e-10, "S");
    expect_relative(noise.squared_norm, expected.squared_norm, 1e-10, "G");
  }
}

TEST(GradientNoise, GradientIsBitIdenticalWithAndWithoutEstimate) {
  for (const ModelCase& c : model_cases()) {
    SCOPED_TRACE(c.name);
    Dataset data = testing::random_dataset(c.shape, c.classes, 9, 23);
    auto model = make_model(c.spec, data);
    std::vector<float> params(model->num_parameters()), plain(params.size()),
        estimated(params.size());
    model->initialize(params, 8);
    const std::vector<std::int64_t> rows = {8, 1, 2, 7, 3, 5};
    GradientNoise noise;
    const double loss = model->loss_and_gradient(params, {&data, rows}, plain);
    const double loss_estimated =
        model->loss_and_gradient(params, {&data, rows}, estimated, &noise);
    EXPECT_TRUE(noise.valid);
    EXPECT_EQ(std::memcmp(&loss, &loss_estimated, sizeof loss), 0);
    EXPECT_EQ(std::memcmp(plain.data(), estimated.data(), plain.size() * sizeof(float)), 0);
  }
}

TEST(GradientNoise, SingleSampleBatchesAreNotValid) {
  EXPECT_FALSE(gradient_noise(1, 1.0, 1.0, 1.0).valid);
  EXPECT_FALSE(gradient_noise(0, 0.0, 0.0, 0.0).valid);
  EXPECT_FALSE(gradient_noise(4, std::nan(""), 1.0, 1.0).valid);
  EXPECT_TRUE(gradient_noise(2, 1.0, 1.0, 1.0).valid);

  Dataset data = testing::random_dataset({1, 1, 6}, 3, 4, 24);
  auto model = make_model({.kind = ModelKind::kLogisticRegression, .l2 = 0.1}, data);
  std::vector<float> params(model->num_parameters()), grad(params.size()), plain(params.size());
  model->initialize(params, 1);
  const std::vector<std::int64_t> rows = {2};
  GradientNoise noise{.squared_norm = 5, .variance = 5, .valid = true};
  model->loss_and_gradient(params, {&data, rows}, grad, &noise);
  EXPECT_FALSE(noise.valid);
  EXPECT_EQ(noise.variance, 0);
  EXPECT_EQ(noise.squared_norm, 0);
  model->loss_and_gradient(params, {&data, rows}, plain);
  EXPECT_EQ(std::memcmp(plain.data(), grad.data(), plain.size() * sizeof(float)), 0);
}

TEST(GradientNoise, FormulaFromSums) {
  // Two samples with contributions u_1 = (1, 0), u_2 = (0, 1): U = 2, M = 2,
  // S = (2 * 2 - 2) / 1 = 2; G = F - S, clipped at 0.
  const GradientNoise a = gradient_noise(2, 2.0, 2.0, 3.0);
  EXPECT_DOUBLE_EQ(a.variance, 2.0);
  EXPECT_DOUBLE_EQ(a.squared_norm, 1.0);
  const GradientNoise b = gradient_noise(2, 2.0, 2.0, 1.5);
  EXPECT_DOUBLE_EQ(b.squared_norm, 0.0);
  // Identical samples: no spread (rounding below zero is clipped).
  const GradientNoise c = gradient_noise(4, 1.0, 4.0 + 1e-15, 4.0);
  EXPECT_EQ(c.variance, 0.0);
  EXPECT_DOUBLE_EQ(c.squared_norm, 4.0);
}

// Logistic regression on a 200-sample shard whose labels depend on the features, at weights
// confidently wrong (a large mean gradient): with batches drawn i.i.d. with replacement, the
// mean of S over many batches is within a few standard errors of the exact variance of the
// batch-mean gradient, tr(Sigma)/n, and the mean of G of the squared norm of the full
// gradient.
TEST(GradientNoise, UnbiasedOverManyBatches) {
  constexpr int kShard = 200, kDim = 4, kClasses = 3, kBatch = 16, kBatches = 4000;
  const double l2 = 0.05;
  Dataset data;
  data.name = "shard";
  data.shape = {1, 1, kDim};
  data.dim = kDim;
  data.classes = kClasses;
  Rng rng(31);
  for (int i = 0; i < kShard; ++i) {
    double x[kDim];
    for (double& v : x) v = rng.normal();
    for (double v : x) data.features.push_back(float(v));
    const double score = x[0] + 0.5 * x[1] + 0.3 * rng.normal();
    data.labels.push_back(score < -0.4 ? 0 : score < 0.6 ? 1 : 2);
  }
  const ModelSpec spec{.kind = ModelKind::kLogisticRegression, .l2 = l2};
  Network<double> net = build_network<double>(spec, data.shape, kClasses);
  std::vector<double> params(net.num_parameters(), 0.0), grad(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = 0.1 * std::sin(double(i));
  params[0] = 3;   // W(0, 0): confidently wrong on feature 0, for a large mean gradient
  params[2] = -3;  // W(2, 0)
  const std::size_t p = params.size();

  // Exact moments over the shard: mu (data part), tr(Sigma) with the 1/N covariance.
  std::vector<std::vector<double>> samples(kShard, std::vector<double>(p));
  std::vector<double> mu(p, 0.0);
  for (std::int64_t i = 0; i < kShard; ++i) {
    net.loss_and_gradient(params, {&data, std::span<const std::int64_t>(&i, 1)}, grad);
    for (std::size_t k = 0; k < p; ++k) {
      samples[std::size_t(i)][k] = grad[k] - l2 * params[k];
      mu[k] += samples[std::size_t(i)][k] / kShard;
    }
  }
  double trace = 0;
  for (const auto& g : samples) {
    for (std::size_t k = 0; k < p; ++k) trace += (g[k] - mu[k]) * (g[k] - mu[k]) / kShard;
  }
  double full = 0;
  for (std::size_t k = 0; k < p; ++k) full += (mu[k] + l2 * params[k]) * (mu[k] + l2 * params[k]);
  const double variance = trace / kBatch;
  ASSERT_GT(full, 2 * variance);  // G is not clipped (below): the clip would bias it

  double sum_s = 0, sum_s2 = 0, sum_g = 0, sum_g2 = 0;
  int clipped = 0;
  std::vector<std::int64_t> rows(kBatch);
  for (int t = 0; t < kBatches; ++t) {
    for (auto& r : rows) r = std::int64_t(rng.below(kShard));
    GradientNoise noise;
    net.loss_and_gradient(params, {&data, rows}, grad, &noise);
    ASSERT_TRUE(noise.valid);
    sum_s += noise.variance;
    sum_s2 += noise.variance * noise.variance;
    sum_g += noise.squared_norm;
    sum_g2 += noise.squared_norm * noise.squared_norm;
    clipped += noise.squared_norm == 0;
  }
  const double mean_s = sum_s / kBatches, mean_g = sum_g / kBatches;
  const double error_s = std::sqrt((sum_s2 / kBatches - mean_s * mean_s) / (kBatches - 1));
  const double error_g = std::sqrt((sum_g2 / kBatches - mean_g * mean_g) / (kBatches - 1));
  EXPECT_EQ(clipped, 0);
  EXPECT_NEAR(mean_s, variance, 4 * error_s) << "relative standard error " << error_s / variance;
  EXPECT_NEAR(mean_g, full, 4 * error_g) << "relative standard error " << error_g / full;
  // The test can tell: dividing by n instead of n - 1 would be off by variance / n.
  EXPECT_LT(4 * error_s, variance / kBatch);
}

}  // namespace
}  // namespace fastk::learning
