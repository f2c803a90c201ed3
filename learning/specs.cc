#include "learning/specs.h"

#include <stdexcept>
#include <utility>

namespace fastk::learning {
namespace {

// One name table per enum: parse and to_string read the same list.
template <typename E>
using Name = std::pair<E, const char*>;

template <typename E, std::size_t N>
E parse_name(const std::string& name, const Name<E> (&names)[N], const char* what) {
  std::string accepted;
  for (const auto& [value, text] : names) {
    if (name == text) return value;
    accepted += accepted.empty() ? "" : ", ";
    accepted += text;
  }
  throw std::invalid_argument("unknown " + std::string(what) + " '" + name +
                              "' (expected one of: " + accepted + ")");
}

template <typename E, std::size_t N>
std::string name_of(E value, const Name<E> (&names)[N]) {
  for (const auto& [v, text] : names) {
    if (v == value) return text;
  }
  return "?";
}

constexpr Name<DatasetKind> kDatasetNames[] = {{DatasetKind::kFashionMnist, "fashion_mnist"},
                                               {DatasetKind::kMnist, "mnist"},
                                               {DatasetKind::kCifar10, "cifar10"},
                                               {DatasetKind::kGaussianMixture, "gaussian_mixture"},
                                               {DatasetKind::kLeastSquares, "least_squares"}};
constexpr Name<Normalization> kNormalizationNames[] = {{Normalization::kScale, "scale"},
                                                       {Normalization::kStandardize, "standardize"},
                                                       {Normalization::kPerChannel, "per_channel"}};
constexpr Name<Augmentation> kAugmentationNames[] = {{Augmentation::kNone, "none"},
                                                     {Augmentation::kCropFlip, "crop_flip"}};
constexpr Name<PartitionKind> kPartitionNames[] = {{PartitionKind::kIid, "iid"},
                                                   {PartitionKind::kShards, "shards"},
                                                   {PartitionKind::kDirichlet, "dirichlet"}};
constexpr Name<ModelKind> kModelNames[] = {{ModelKind::kLogisticRegression, "logistic_regression"},
                                           {ModelKind::kMlp, "mlp"},
                                           {ModelKind::kLenet, "lenet"},
                                           {ModelKind::kCifarCnn, "cifar_cnn"},
                                           {ModelKind::kLinearRegression, "linear_regression"},
                                           {ModelKind::kTorchScript, "torchscript"}};
constexpr Name<ScheduleKind> kScheduleNames[] = {{ScheduleKind::kConstant, "constant"},
                                                 {ScheduleKind::kStep, "step"},
                                                 {ScheduleKind::kCosine, "cosine"},
                                                 {ScheduleKind::kMultiStep, "multistep"}};

}  // namespace

DatasetKind parse_dataset_kind(const std::string& n) {
  return parse_name(n, kDatasetNames, "data set");
}
Normalization parse_normalization(const std::string& n) {
  return parse_name(n, kNormalizationNames, "normalization");
}
Augmentation parse_augmentation(const std::string& n) {
  return parse_name(n, kAugmentationNames, "augmentation");
}
PartitionKind parse_partition_kind(const std::string& n) {
  return parse_name(n, kPartitionNames, "partition");
}
ModelKind parse_model_kind(const std::string& n) { return parse_name(n, kModelNames, "model"); }
ScheduleKind parse_schedule_kind(const std::string& n) {
  return parse_name(n, kScheduleNames, "schedule");
}
std::string to_string(DatasetKind k) { return name_of(k, kDatasetNames); }
std::string to_string(Normalization k) { return name_of(k, kNormalizationNames); }
std::string to_string(Augmentation k) { return name_of(k, kAugmentationNames); }
std::string to_string(PartitionKind k) { return name_of(k, kPartitionNames); }
std::string to_string(ModelKind k) { return name_of(k, kModelNames); }
std::string to_string(ScheduleKind k) { return name_of(k, kScheduleNames); }

std::string default_data_dir(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kFashionMnist:
      return "/usr/share/datasets/fashion-mnist";
    case DatasetKind::kMnist:
      return "data/mnist";
    case DatasetKind::kCifar10:
      return "data/cifar-10-batches-bin";
    default:
      return "";
  }
}

}  // namespace fastk::learning
