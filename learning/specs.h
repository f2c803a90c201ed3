// Plain descriptions of what to train on, what to train and how: the [data], [model] and
// [optimizer] tables of an experiment config (node/config/ fills them in; the keys and their
// defaults are documented in experiments/configs/README.md). Every field has a default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastk::learning {

enum class DatasetKind {
  kFashionMnist,     // IDX files (train-/t10k-{images-idx3,labels-idx1}-ubyte[.gz]) in `dir`
  kMnist,            // same file names as Fashion-MNIST
  kCifar10,          // data_batch_{1..5}.bin and test_batch.bin in `dir`
  kGaussianMixture,  // synthetic classification, generated from `seed`
  kLeastSquares,     // synthetic regression y = <w*, x> + noise, generated from `seed`
};

enum class Normalization {
  kScale,        // pixels / 255 (synthetic data is left as generated)
  kStandardize,  // then subtract the training set's mean and divide by its standard deviation
  kPerChannel,   // the same per colour channel: each channel's own mean and standard deviation
};

// Training-time augmentation of image data (learning/augmentation.h); evaluation never
// augments.
enum class Augmentation {
  kNone,
  kCropFlip,  // random crop with 4-pixel zero padding, horizontal flip with probability 1/2
};

enum class PartitionKind {
  kIid,        // shuffled, equal shares
  kShards,     // each peer holds `classes_per_peer` classes
  kDirichlet,  // per class, shares drawn from Dirichlet(alpha): label skew
};

struct PartitionSpec {
  PartitionKind kind = PartitionKind::kIid;
  int classes_per_peer = 2;  // kShards
  double alpha = 0.5;        // kDirichlet: smaller = more skewed
};

struct DataSpec {
  DatasetKind kind = DatasetKind::kFashionMnist;
  std::string dir;  // empty = the default folder of the kind (see default_data_dir)
  Normalization normalization = Normalization::kScale;
  Augmentation augment = Augmentation::kNone;
  std::int64_t train_limit = 0;  // keep only the first N training samples; 0 = all
  std::int64_t test_limit = 0;   // keep only the first N test samples; 0 = all
  // Synthetic data sets.
  std::int64_t train_samples = 2000;
  std::int64_t test_samples = 500;
  int dim = 10;
  int classes = 4;            // kGaussianMixture
  double separation = 3.0;    // kGaussianMixture: distance scale between class means
  double noise = 0.1;         // kLeastSquares: standard deviation of the target noise
  std::uint64_t seed = 1;     // synthetic generation and partitioning
  PartitionSpec partition{};  // how the training set is split across peers
};

enum class ModelKind {
  kLogisticRegression,  // multinomial logistic regression (softmax over one dense layer)
  kMlp,                 // dense + ReLU hidden layers, softmax output
  kLenet,               // LeNet-5 style CNN for 28x28x1 inputs
  kCifarCnn,            // small CNN for 32x32x3 inputs
  kLinearRegression,    // one output, squared loss (for kLeastSquares data)
  kTorchScript,         // a module saved by torch.jit.save (learning/torchscript/), from `file`
};

struct ModelSpec {
  ModelKind kind = ModelKind::kLogisticRegression;
  std::vector<int> hidden = {128};  // kMlp: hidden layer widths
  double l2 = 0.0;                  // loss += l2/2 * ||params||^2 (all parameters)
  std::uint64_t init_seed = 1;      // parameter initialisation
  std::string file{};               // kTorchScript: the .pt file (a config's path, resolved)
  int threads = 1;                  // kTorchScript: libtorch's intra-op threads per process
};

// After warmup_iterations (t counts from the end of the warm-up, T = total - warm-up):
enum class ScheduleKind {
  kConstant,   // lr
  kStep,       // lr * gamma^floor(t / step_iterations)
  kCosine,     // min_lr + (lr - min_lr) * (1 + cos(pi * t / T)) / 2
  kMultiStep,  // lr * gamma^(number of milestones m with t >= m * T): He et al.'s /10 at 50%, 75%
};

struct OptimizerSpec {
  double lr = 0.05;
  ScheduleKind schedule = ScheduleKind::kConstant;
  std::int64_t step_iterations = 1000;  // kStep: iterations between decays
  double gamma = 0.1;                   // kStep, kMultiStep: decay factor
  // kMultiStep: fractions of the iterations after the warm-up, increasing, in (0, 1].
  std::vector<double> milestones = {0.5, 0.75};
  double min_lr = 0.0;  // kCosine: final learning rate
  // Linear warm-up: iteration i < warmup_iterations uses lr * (i + 1) / warmup_iterations.
  std::int64_t warmup_iterations = 0;
  double momentum = 0.0;  // heavy-ball momentum in [0, 1)
  bool nesterov = false;
  double weight_decay = 0.0;  // decoupled: step also subtracts lr * weight_decay * params
  int batch_size = 32;        // mini-batch size of each gradient
  std::uint64_t seed = 1;     // mini-batch sampling
};

// Names as written in configs ("fashion_mnist", "mlp", "cosine", ...). parse_* throw
// std::invalid_argument listing the accepted names.
DatasetKind parse_dataset_kind(const std::string& name);
Normalization parse_normalization(const std::string& name);
Augmentation parse_augmentation(const std::string& name);
PartitionKind parse_partition_kind(const std::string& name);
ModelKind parse_model_kind(const std::string& name);
ScheduleKind parse_schedule_kind(const std::string& name);
std::string to_string(DatasetKind kind);
std::string to_string(Normalization normalization);
std::string to_string(Augmentation augmentation);
std::string to_string(PartitionKind kind);
std::string to_string(ModelKind kind);
std::string to_string(ScheduleKind kind);

// Where a data set's files are looked for when DataSpec::dir is empty:
// fashion_mnist: /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist);
// mnist: data/mnist; cifar10: data/cifar-10-batches-bin (relative to the working directory).
std::string default_data_dir(DatasetKind kind);

}  // namespace fastk::learning
