// Finite-difference checks, in double precision, of every layer's parameter and input
// gradients and of every model's full loss gradient (cross-entropy or squared error + L2).
#include <gtest/gtest.h>

#include <cmath>
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

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;  // relative to max(1, |derivative|)

void expect_close(double analytic, double numeric, const std::string& what) {
  EXPECT_NEAR(analytic, numeric, kTolerance * std::max(1.0, std::abs(numeric))) << what;
}

// f(params, in) = sum(out .* weights): its gradient is backward() with grad_out = weights.
void check_layer(Layer<double>& layer, int batch, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> params(layer.num_parameters());
  for (double& p : params) p = rng.normal();
  Matrix<double> in(layer.input_dim(), batch), weights(layer.output_dim(), batch);
  for (Eigen::Index i = 0; i < in.size(); ++i) in.data()[i] = rng.normal();
  for (Eigen::Index i = 0; i < weights.size(); ++i) weights.data()[i] = rng.normal();

  Matrix<double> out, grad_in;
  auto objective = [&]() {
    Matrix<double> o;
    layer.forward(params.data(), in, o);
    return o.cwiseProduct(weights).sum();
  };
  layer.forward(params.data(), in, out);
  std::vector<double> grad_params(params.size());
  layer.backward(params.data(), in, out, weights, grad_params.data(), &grad_in, nullptr);
  ASSERT_EQ(grad_in.rows(), in.rows());
  ASSERT_EQ(grad_in.cols(), in.cols());

  for (std::size_t i = 0; i < params.size(); ++i) {
    const double saved = params[i];
    params[i] = saved + kStep;
    const double up = objective();
    params[i] = saved - kStep;
    const double down = objective();
    params[i] = saved;
    expect_close(grad_params[i], (up - down) / (2 * kStep), "parameter " + std::to_string(i));
  }
  for (Eigen::Index i = 0; i < in.size(); ++i) {
    const double saved = in.data()[i];
    in.data()[i] = saved + kStep;
    const double up = objective();
    in.data()[i] = saved - kStep;
    const double down = objective();
    in.data()[i] = saved;
    expect_close(grad_in.data()[i], (up - down) / (2 * kStep), "input " + std::to_string(i));
  }
}

TEST(LayerGradient, Dense) {
  Dense<double> layer(5, 4, 1.0);
  check_layer(layer, 3, 1);
}

TEST(LayerGradient, Relu) {
  Relu<double> layer(7);
  check_layer(layer, 3, 2);
}

TEST(LayerGradient, ConvolutionWithPadding) {
  Conv2d<double> layer({2, 6, 5}, 3, 3, 1);
  check_layer(layer, 2, 3);
}

TEST(LayerGradient, ConvolutionWithoutPadding) {
  Conv2d<double> layer({3, 5, 6}, 2, 2, 0);
  check_layer(layer, 2, 4);
}

TEST(LayerGradient, MaxPoolIncludingDroppedBorder) {
  MaxPool<double> layer({2, 5, 4}, 2);  // the fifth row does not fill a window
  check_layer(layer, 2, 5);
}

// Checks the model loss gradient coordinate by coordinate on `coordinates` entries (all when
// the model is small), and along one random direction (every coordinate at once).
// On `samples` samples (at most 3).
void check_model(const ModelSpec& spec, SampleShape shape, int classes, std::size_t coordinates,
                 std::size_t samples = 3) {
  Network<double> net = build_network<double>(spec, shape, classes);
  Dataset data = testing::random_dataset(shape, classes, 3, 11);
  std::vector<std::int64_t> rows = {2, 0, 1};
  rows.resize(samples);
  BatchView batch{&data, rows};
  std::vector<double> params(net.num_parameters()), grad(params.size()), scratch(params.size());
  net.initialize(params, 5);
  Rng rng(9);
  for (double& p : params) p += 0.05 * rng.normal();  // biases away from zero, too
  net.loss_and_gradient(params, batch, grad);
  auto loss = [&]() { return net.loss_and_gradient(params, batch, scratch); };

  const std::size_t n = params.size();
  const std::size_t stride = std::max<std::size_t>(1, n / std::min(n, coordinates));
  for (std::size_t i = rng.below(stride); i < n; i += stride) {
    const double saved = params[i];
    params[i] = saved + kStep;
    const double up = loss();
    params[i] = saved - kStep;
    const double down = loss();
    params[i] = saved;
    expect_close(grad[i], (up - down) / (2 * kStep), "parameter " + std::to_string(i));
  }
  std::vector<double> direction(n), saved = params;
  double along = 0;
  for (std::size_t i = 0; i < n; ++i) along += grad[i] * (direction[i] = rng.normal());
  for (std::size_t i = 0; i < n; ++i) params[i] = saved[i] + kStep * direction[i];
  const double up = loss();
  for (std::size_t i = 0; i < n; ++i) params[i] = saved[i] - kStep * direction[i];
  const double down = loss();
  expect_close(along, (up - down) / (2 * kStep), "random direction");
}

TEST(ModelGradient, LogisticRegressionWithL2) {
  ModelSpec spec{.kind = ModelKind::kLogisticRegression, .l2 = 0.1};
  check_model(spec, {1, 1, 6}, 4, 1000);
}

TEST(ModelGradient, MlpWithTwoHiddenLayers) {
  ModelSpec spec{.kind = ModelKind::kMlp, .hidden = {7, 5}, .l2 = 0.01};
  check_model(spec, {1, 1, 6}, 3, 1000);
}

TEST(ModelGradient, LinearRegressionSquaredError) {
  ModelSpec spec{.kind = ModelKind::kLinearRegression, .l2 = 0.1};
  check_model(spec, {1, 1, 5}, 0, 1000);
}

TEST(ModelGradient, Lenet) {
  ModelSpec spec{.kind = ModelKind::kLenet, .l2 = 0.001};
  check_model(spec, {1, 28, 28}, 10, 20, 2);
}

TEST(ModelGradient, CifarCnn) {
  ModelSpec spec{.kind = ModelKind::kCifarCnn, .l2 = 0.001};
  check_model(spec, {3, 32, 32}, 10, 6, 2);
}

// The float model peers train runs the same code as the double network checked above.
TEST(ModelGradient, FloatModelAgreesWithDoubleNetwork) {
  ModelSpec spec{.kind = ModelKind::kMlp, .hidden = {16}, .l2 = 0.01};
  const SampleShape shape{1, 1, 12};
  Dataset data = testing::random_dataset(shape, 5, 8, 3);
  std::vector<std::int64_t> rows = {0, 1, 2, 3, 4, 5, 6, 7};
  BatchView batch{&data, rows};
  auto model = make_model(spec, data);
  Network<double> net = build_network<double>(spec, shape, 5);
  std::vector<float> params(model->num_parameters()), grad(params.size());
  model->initialize(params, 7);
  std::vector<double> params64(params.begin(), params.end()), grad64(params.size());
  const double loss = model->loss_and_gradient(params, batch, grad);
  const double loss64 = net.loss_and_gradient(params64, batch, grad64);
  EXPECT_NEAR(loss, loss64, 1e-5 * std::abs(loss64));
  for (std::size_t i = 0; i < grad.size(); ++i) EXPECT_NEAR(grad[i], grad64[i], 1e-5) << i;
}

}  // namespace
}  // namespace fastk::learning
