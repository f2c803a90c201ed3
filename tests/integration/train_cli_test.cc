// Runs the real `fastk train` executable on small synthetic and file data sets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "learning/data_sources.h"
#include "tests/support/run_fastk.h"

namespace {

using ::testing::HasSubstr;

using Result = fastk::testing::CommandResult;

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fastk_train_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // `fastk train ARGS` writing its run folder under the test's folder, not the source tree.
  Result run(const std::string& args) const {
    return fastk::testing::run_fastk(args + " --output " + (dir_ / "out").string());
  }
  std::string read(const std::filesystem::path& path) const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string write_config(const std::string& text) const {
    const std::string path = (dir_ / "exp.toml").string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(TrainCli, TrainsAnMlpOnAGaussianMixture) {
  Result r = run("train " + write_config(R"(
[run]
iterations = 300
[data]
kind = "gaussian_mixture"
train_samples = 1000
test_samples = 500
dim = 5
classes = 3
separation = 4.0
[model]
kind = "mlp"
hidden = [16]
[optimizer]
lr = 0.1
momentum = 0.9
)"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fastk train: mlp (147 parameters) on gaussian_mixture"));
  EXPECT_THAT(r.output, HasSubstr("epoch   1.02  iter 32  train loss"));  // after each epoch
  const auto at = r.output.find("final: test accuracy 0.");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 21, 6)), 0.9) << r.output;
}

TEST_F(TrainCli, TrainsOnIdxFilesForAGivenNumberOfEpochs) {
  std::vector<std::uint8_t> pixels(40 * 4), labels(40);
  for (int i = 0; i < 40; ++i) {
    labels[std::size_t(i)] = std::uint8_t(i % 2);
    pixels[std::size_t(4 * i + (i % 2) * 2)] = 255;  // class = which half is lit
  }
  const std::string d = dir_.string();
  fastk::learning::write_idx(d + "/train-images-idx3-ubyte", d + "/train-labels-idx1-ubyte", 2, 2,
                             pixels, labels);
  fastk::learning::write_idx(d + "/t10k-images-idx3-ubyte", d + "/t10k-labels-idx1-ubyte", 2, 2,
                             pixels, labels);
  Result r = run("train --epochs 8 " +
                 write_config("[data]\nkind = \"mnist\"\ndir = \".\"\n[optimizer]\nlr = 0.5\n"
                              "batch_size = 8\n"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("on mnist (40 train, 40 test samples"));
  EXPECT_THAT(r.output, HasSubstr("40 iterations (8.00 epochs)"));
  EXPECT_THAT(r.output, HasSubstr("final: test accuracy 1.0000"));
}

TEST_F(TrainCli, MissingDataFilesAndMismatchedModelsAreClearErrors) {
  Result r = run("train " + write_config("[data]\nkind = \"mnist\"\ndir = \"nowhere\"\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("fastk: error: data set 'mnist': folder " + dir_.string() +
                                  "/nowhere does not exist"));
  std::filesystem::create_directories(dir_ / "empty");
  r = run("train " + write_config("[data]\nkind = \"mnist\"\ndir = \"empty\"\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("data set 'mnist': neither " + dir_.string() +
                                  "/empty/train-images-idx3-ubyte.gz nor"));
  r = run("train " +
          write_config("[data]\nkind = \"gaussian_mixture\"\n[model]\nkind = \"lenet\"\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("[model] does not fit [data]: model 'lenet' needs 28x28x1"));
  r = run("train " + write_config("[optimizer]\nlr = \"fast\"\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("optimizer.lr: expected a number, got a string"));
}

// Like `fastk sim` and `fastk run`, train leaves its results in a run folder: by default
// <run.output>/<run.name>-train, so a simulation of the same config keeps its own.
TEST_F(TrainCli, WritesItsSummaryAndFinalModelIntoTheRunFolder) {
  const std::string config =
      write_config("[run]\nname = \"base\"\niterations = 50\noutput = \"" + dir_.string() + R"("
[data]
kind = "gaussian_mixture"
train_samples = 200
test_samples = 100
dim = 4
classes = 2
[model]
kind = "logistic_regression"
)");
  const Result r = fastk::testing::run_fastk("train " + config + " --set run.iterations=40");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::filesystem::path folder = dir_ / "base-train";
  EXPECT_THAT(r.output, HasSubstr("outputs: " + folder.string()));
  EXPECT_EQ(read(folder / "config.toml"), read(config));
  // logistic regression on 4 features and 2 classes: 5 x 2 float32 parameters.
  ASSERT_TRUE(std::filesystem::exists(folder / "model-final.f32")) << r.output;
  EXPECT_EQ(std::filesystem::file_size(folder / "model-final.f32"), 10 * sizeof(float));
  const std::string summary = read(folder / "summary.json");
  EXPECT_THAT(summary, HasSubstr("\"runtime\": \"train\""));
  EXPECT_THAT(summary, HasSubstr("\"name\": \"base\""));
  EXPECT_THAT(summary, HasSubstr("\"overrides\": [\n    \"run.iterations=40\"\n  ]"));
  EXPECT_THAT(summary, HasSubstr("\"iterations\": 40,"));
  EXPECT_THAT(summary, HasSubstr("\"test_samples\": 100,"));
  // The figures the final line prints, in the summary too.
  const auto at = r.output.find("final: test accuracy ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const double printed = std::stod(r.output.substr(at + 21, 6));
  const auto key = summary.find("\"test_accuracy\": ");
  ASSERT_NE(key, std::string::npos) << summary;
  EXPECT_NEAR(std::stod(summary.substr(key + 17)), printed, 1e-4) << summary;
  for (const char* other : {"\"train_s\": ", "\"test_loss\": ", "\"final_train_loss\": "}) {
    EXPECT_THAT(summary, HasSubstr(other));
  }
  // --output names the folder; regression has no accuracy: null, not 0.
  const std::filesystem::path elsewhere = dir_ / "elsewhere";
  const Result regression = fastk::testing::run_fastk(
      "train " + config + " --set data.kind=least_squares --set model.kind=linear_regression" +
      " --output " + elsewhere.string());
  ASSERT_EQ(regression.exit_code, 0) << regression.output;
  EXPECT_THAT(read(elsewhere / "summary.json"), HasSubstr("\"test_accuracy\": null"));
}

TEST_F(TrainCli, RegressionReportsTheTestLossOnly) {
  Result r = run("train " + write_config(R"(
[run]
iterations = 400
[data]
kind = "least_squares"
dim = 4
noise = 0.1
[model]
kind = "linear_regression"
[optimizer]
lr = 0.05
)"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("accuracy")));
  const auto at = r.output.find("final: test loss ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_LT(std::stod(r.output.substr(at + 17, 6)), 0.02) << r.output;  // noise: 0.005
}

TEST_F(TrainCli, DivergenceIsReportedWithAHint) {
  Result r = run("train " + write_config(R"(
[run]
iterations = 200
[data]
kind = "least_squares"
dim = 50
[model]
kind = "linear_regression"
[optimizer]
lr = 10.0
)"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("training diverged at iteration"));
  EXPECT_THAT(r.output, HasSubstr("lower optimizer.lr"));
}

}  // namespace
