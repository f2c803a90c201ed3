// The TorchScript backend (learning/torchscript/): a module exported by
// experiments/models/export_torchscript.py is the same model as the hand-written one, its
// gradient's bits do not depend on where the caller keeps the parameters, and every bad module
// is refused at load with the file's name and what is wrong.
#include "learning/torchscript/torchscript_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <vector>

#include "learning/model.h"
#include "tests/support/temp_dir.h"
#include "tests/support/torchscript_files.h"
#include "tests/unit/learning/test_data.h"

namespace fastk::learning {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

ModelSpec torchscript(const std::filesystem::path& file, double l2 = 0) {
  ModelSpec spec;
  spec.kind = ModelKind::kTorchScript;
  spec.file = file.string();
  spec.l2 = l2;
  return spec;
}

// The hand-written Dense layer keeps W (outputs x inputs) column-major, torch.nn.Linear
// row-major: the same values, transposed. Layers follow each other, weight then bias, in both.
std::vector<float> to_torch_layout(std::span<const float> hand, const std::vector<int>& widths) {
  std::vector<float> out;
  std::size_t at = 0;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    const int in = widths[l], outs = widths[l + 1];
    for (int o = 0; o < outs; ++o) {
      for (int i = 0; i < in; ++i) out.push_back(hand[at + std::size_t(i) * outs + o]);
    }
    at += std::size_t(in) * outs;
    out.insert(out.end(), hand.begin() + long(at), hand.begin() + long(at) + outs);
    at += outs;
  }
  return out;
}

class TorchScriptModelTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = testutil::fresh_test_dir("fastk_torchscript");
};

// float32 sums of up to 784 products in another order (libtorch's kernels against Eigen's)
// differ by a few units in the last place of the largest terms: 1e-5 relative to the largest
// value is far above that and far below any real difference (a wrong layout, a missing bias).
TEST_F(TorchScriptModelTest, TheExportedMlpIsTheHandWrittenMlp) {
  ASSERT_TRUE(torchscript_available());
  const Dataset data = testing::random_dataset({1, 28, 28}, 10, 64, 3);
  for (const double l2 : {0.0, 0.01}) {
    auto hand = make_model({.kind = ModelKind::kMlp, .hidden = {128}, .l2 = l2}, data);
    auto ours = make_model(torchscript(fastk::testing::exported_model("mlp", dir_), l2), data);
    ASSERT_EQ(ours->num_parameters(), hand->num_parameters());
    std::vector<float> hand_params(hand->num_parameters());
    hand->initialize(hand_params, 7);
    const std::vector<int> widths = {784, 128, 10};
    const auto params = to_torch_layout(hand_params, widths);

    std::vector<std::int64_t> rows(32);
    std::iota(rows.begin(), rows.end(), 5);
    std::vector<float> hand_grad(params.size()), grad(params.size());
    const double hand_loss = hand->loss_and_gradient(hand_params, {&data, rows}, hand_grad);
    const double loss = ours->loss_and_gradient(params, {&data, rows}, grad);
    EXPECT_NEAR(loss, hand_loss, 1e-5 * hand_loss) << "l2 " << l2;
    const auto expected = to_torch_layout(hand_grad, widths);
    float largest = 0;
    for (float g : expected) largest = std::max(largest, std::abs(g));
    for (std::size_t j = 0; j < grad.size(); ++j) {
      ASSERT_NEAR(grad[j], expected[j], 1e-5 * largest) << "parameter " << j << ", l2 " << l2;
    }

    std::vector<std::int32_t> hand_classes(rows.size()), classes(rows.size());
    hand->predict(hand_params, {&data, rows}, hand_classes);
    ours->predict(params, {&data, rows}, classes);
    EXPECT_EQ(classes, hand_classes);
    const Evaluation h = hand->evaluate(hand_params, data), e = ours->evaluate(params, data);
    EXPECT_NEAR(e.loss, h.loss, 1e-5 * h.loss);
    EXPECT_EQ(e.accuracy, h.accuracy);
    EXPECT_EQ(e.samples, 64);
  }
}

// The simulator and a real peer hold the same parameters at different addresses, and a peer
// clones its model per thread: the gradient's bits must not depend on either.
TEST_F(TorchScriptModelTest, GradientBitsDoNotDependOnTheAddressOrTheInstance) {
  const Dataset data = testing::random_dataset({1, 1, 8}, 3, 40, 5);
  auto model = make_model(torchscript(fastk::testing::test_module("tiny_mlp", dir_), 0.01), data);
  const std::size_t n = model->num_parameters();
  EXPECT_EQ(n, 8u * 8 + 8 + 8 * 3 + 3);
  std::vector<float> storage(n + 64);
  std::vector<float> params(n);
  model->initialize(params, 1);
  std::vector<std::int64_t> rows = {0, 3, 9, 12, 13, 20, 31, 39, 17};
  std::vector<float> reference(n);
  const double loss = model->loss_and_gradient(params, {&data, rows}, reference);
  auto clone = model->clone();
  // The first 64-byte aligned float of `storage`, then 4 and 12 bytes past it: in place, and
  // copied to an aligned vector.
  const std::size_t aligned =
      (64 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64) % 64 / sizeof(float);
  for (std::size_t shift : {aligned, aligned + 1, aligned + 3}) {
    std::copy(params.begin(), params.end(), storage.begin() + long(shift));
    const std::span<const float> moved(storage.data() + shift, n);
    for (Model* m : {model.get(), clone.get()}) {
      std::vector<float> grad(n);
      EXPECT_EQ(m->loss_and_gradient(moved, {&data, rows}, grad), loss);
      EXPECT_EQ(grad, reference) << "shift " << shift;
    }
  }
  // New values at the address the model last read in place: it sees them.
  std::vector<float> changed(params);
  for (float& v : changed) v *= 0.5f;
  std::vector<float> expected(n), grad(n);
  clone->loss_and_gradient(changed, {&data, rows}, expected);
  const std::span<const float> in_place(storage.data() + aligned, n);
  std::copy(params.begin(), params.end(), storage.begin() + long(aligned));
  model->loss_and_gradient(in_place, {&data, rows}, grad);
  EXPECT_EQ(grad, reference);
  std::copy(changed.begin(), changed.end(), storage.begin() + long(aligned));
  model->loss_and_gradient(in_place, {&data, rows}, grad);
  EXPECT_EQ(grad, expected);
  EXPECT_NE(grad, reference);
  // The noise estimates cost a half-batch pass more and leave the gradient alone.
  GradientNoise noise;
  EXPECT_EQ(model->loss_and_gradient(params, {&data, rows}, grad, &noise), loss);
  EXPECT_EQ(grad, reference);
  EXPECT_TRUE(noise.valid);
  EXPECT_GT(noise.variance, 0);
}

// The saved values are every peer's starting point; the model changes only through the vector.
TEST_F(TorchScriptModelTest, StartsFromTheSavedParametersAndTrains) {
  const Dataset data = testing::random_dataset({1, 1, 8}, 3, 90, 9);
  auto model = make_model(torchscript(fastk::testing::test_module("tiny_mlp", dir_)), data);
  std::vector<float> a(model->num_parameters()), b(a.size());
  model->initialize(a, 1);
  model->initialize(b, 2);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(std::any_of(a.begin(), a.end(), [](float v) { return v != 0; }));
  std::vector<std::int64_t> all(90);
  std::iota(all.begin(), all.end(), 0);
  const double before = model->evaluate(a, data).loss;
  std::vector<float> grad(a.size());
  for (int step = 0; step < 50; ++step) {
    model->loss_and_gradient(a, {&data, all}, grad);
    for (std::size_t j = 0; j < a.size(); ++j) a[j] -= 0.5f * grad[j];
  }
  EXPECT_LT(model->evaluate(a, data).loss, before);
}

TEST_F(TorchScriptModelTest, BadModulesAreRefusedWithTheFileAndTheReason) {
  const Dataset vectors = testing::random_dataset({1, 1, 8}, 3, 8, 1);
  const auto refusal = [&](const ModelSpec& spec, const Dataset& data) {
    try {
      make_model(spec, data);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto missing = dir_ / "missing.pt";
  EXPECT_THAT(refusal(torchscript(missing), vectors),
              AllOf(HasSubstr(missing.string()), HasSubstr("no such file")));
  const auto corrupt = dir_ / "corrupt.pt";
  std::ofstream(corrupt) << "not a zip archive";
  EXPECT_THAT(refusal(torchscript(corrupt), vectors),
              AllOf(HasSubstr(corrupt.string()), HasSubstr("not a TorchScript module")));
  const auto check = [&](const std::string& name, const std::string& reason) {
    const auto file = fastk::testing::test_module(name, dir_);
    EXPECT_THAT(refusal(torchscript(file), vectors),
                AllOf(HasSubstr(file.string()), HasSubstr(reason)))
        << name;
  };
  check("no_parameters", "no parameters");
  check("wrong_output", "returns a tensor of shape [2]");
  check("tuple_output", "not a tensor of logits");
  check("integer_input", "fails on inputs [2, 1, 1, 8] (float32");
  check("float64", "is Double; fastk moves float32 vectors");
  check("batchnorm_buffers", "floating-point buffer(s) (norm.running_mean, norm.running_var");
  check("tied_weights", "parameters first.weight and second.weight are one tensor");
  check("frozen_parameter", "parameter hidden.weight does not require grad");
  check("auxiliary_in_training", "has 6 outputs in training mode, the data set has 3 classes");
  // The exported MLP wants 784 features; CIFAR-shaped data has 3072.
  const auto mlp = fastk::testing::exported_model("mlp", dir_);
  EXPECT_THAT(refusal(torchscript(mlp), testing::random_dataset({3, 32, 32}, 10, 4, 1)),
              AllOf(HasSubstr(mlp.string()), HasSubstr("fails on inputs [2, 3, 32, 32]")));
  EXPECT_THAT(refusal(torchscript(mlp), testing::random_dataset({1, 28, 28}, 3, 4, 1)),
              HasSubstr("has 10 outputs in evaluation mode, the data set has 3 classes"));
}

}  // namespace
}  // namespace fastk::learning
