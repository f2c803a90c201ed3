// From a DataSpec to train and test sets: which files, which generator, which normalisation.
#include <cmath>
#include <filesystem>

#include "learning/data_sources.h"

namespace fastk::learning {
namespace {

// "<dir>/<name>.gz" if present, else "<dir>/<name>"; an error naming both when neither is.
std::string find_file(const std::string& dir, const std::string& name, DatasetKind kind) {
  const std::filesystem::path base = std::filesystem::path(dir) / name;
  for (const std::string& candidate : {base.string() + ".gz", base.string()}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  throw DataError("data set '" + to_string(kind) + "': neither " + base.string() + ".gz nor " +
                  base.string() +
                  " exists (set data.dir; README.md, 'Data sets', says how to fetch it)");
}

Dataset read_idx_pair(const std::string& dir, const std::string& prefix, DatasetKind kind,
                      const std::string& name) {
  const std::string images = find_file(dir, prefix + "-images-idx3-ubyte", kind);
  const std::string labels = find_file(dir, prefix + "-labels-idx1-ubyte", kind);
  return read_idx(images, labels, name);
}

}  // namespace

void scale_pixels(TrainTest& data) {
  for (Dataset* d : {&data.train, &data.test}) {
    for (float& x : d->features) x *= 1.0f / 255.0f;
  }
}

void standardize(TrainTest& data) {
  const std::vector<float>& train = data.train.features;
  if (train.empty()) return;
  double sum = 0, sum_squares = 0;
  for (float x : train) sum += x, sum_squares += double(x) * x;
  const double mean = sum / double(train.size());
  const double variance = std::max(sum_squares / double(train.size()) - mean * mean, 0.0);
  const double inverse_std = variance > 0 ? 1.0 / std::sqrt(variance) : 1.0;
  for (Dataset* d : {&data.train, &data.test}) {
    for (float& x : d->features) x = float((x - mean) * inverse_std);
  }
}

TrainTest load_data(const DataSpec& spec) {
  const std::string dir = spec.dir.empty() ? default_data_dir(spec.kind) : spec.dir;
  const bool from_files = !dir.empty();
  if (from_files && !std::filesystem::is_directory(dir)) {
    throw DataError("data set '" + to_string(spec.kind) + "': folder " + dir +
                    " does not exist (set data.dir; README.md, 'Data sets', says how to fetch "
                    "it)");
  }
  TrainTest data;
  bool pixels = true;
  switch (spec.kind) {
    case DatasetKind::kFashionMnist:
    case DatasetKind::kMnist: {
      const std::string name = to_string(spec.kind);
      data.train = read_idx_pair(dir, "train", spec.kind, name + "-train");
      data.test = read_idx_pair(dir, "t10k", spec.kind, name + "-test");
      break;
    }
    case DatasetKind::kCifar10: {
      std::vector<std::string> train_files;
      for (int i = 1; i <= 5; ++i) {
        train_files.push_back(
            find_file(dir, "data_batch_" + std::to_string(i) + ".bin", spec.kind));
      }
      data.train = read_cifar10(train_files, "cifar10-train");
      data.test = read_cifar10({find_file(dir, "test_batch.bin", spec.kind)}, "cifar10-test");
      break;
    }
    case DatasetKind::kGaussianMixture:
      data = make_gaussian_mixture(spec.train_samples, spec.test_samples, spec.dim, spec.classes,
                                   spec.separation, spec.seed);
      pixels = false;
      break;
    case DatasetKind::kLeastSquares:
      data = make_least_squares(spec.train_samples, spec.test_samples, spec.dim, spec.noise,
                                spec.seed);
      pixels = false;
      break;
  }
  truncate(data.train, spec.train_limit);
  truncate(data.test, spec.test_limit);
  if (pixels) scale_pixels(data);
  if (spec.normalization == Normalization::kStandardize) standardize(data);
  return data;
}

}  // namespace fastk::learning
