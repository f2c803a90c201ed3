// From a DataSpec to train and test sets: which files, which generator, which normalisation.
#include <cmath>
#include <filesystem>
#include <optional>

#include "learning/data_sources.h"
#include "learning/idx_rows.h"

namespace fastk::learning {
namespace {

// What to do about a missing data file: CIFAR-10 has a download script; the others are
// described in the README.
std::string how_to_get(DatasetKind kind, const std::string& dir) {
  if (kind == DatasetKind::kCifar10) {
    return "download and check it with scripts/get-cifar10.sh " + dir +
           ", or set data.dir to the folder that holds it; README.md, 'Data sets'";
  }
  return "set data.dir; README.md, 'Data sets', says how to fetch it";
}

// "<dir>/<name>.gz" if present, else "<dir>/<name>"; an error naming both when neither is.
std::string find_file(const std::string& dir, const std::string& name, DatasetKind kind) {
  const std::filesystem::path base = std::filesystem::path(dir) / name;
  for (const std::string& candidate : {base.string() + ".gz", base.string()}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  throw DataError("data set '" + to_string(kind) + "': neither " + base.string() + ".gz nor " +
                  base.string() + " exists (" + how_to_get(kind, dir) + ")");
}

}  // namespace

void scale_pixels(TrainTest& data) {
  for (Dataset* d : {&data.train, &data.test}) {
    for (float& x : d->features) x = scaled_pixel(x);
  }
}

void standardize(TrainTest& data) {
  const std::vector<float>& train = data.train.features;
  if (train.empty()) return;
  Moments moments;
  for (float x : train) moments.add(x);
  const Standardization standardization(moments);
  for (Dataset* d : {&data.train, &data.test}) {
    for (float& x : d->features) x = standardization.apply(x);
  }
}

void standardize_channels(TrainTest& data) {
  const Dataset& train = data.train;
  if (train.features.empty()) return;
  const auto channels = std::size_t(train.shape.channels);
  const std::size_t plane = std::size_t(train.dim) / channels;
  // Each channel's values in sample order: with one channel exactly standardize's sums, so
  // per_channel on grey images gives standardize's bits.
  std::vector<Moments> moments(channels);
  for (std::int64_t r = 0; r < train.size(); ++r) {
    const float* row = train.features.data() + std::size_t(r) * std::size_t(train.dim);
    for (std::size_t c = 0; c < channels; ++c) {
      for (std::size_t i = 0; i < plane; ++i) moments[c].add(row[c * plane + i]);
    }
  }
  std::vector<Standardization> per_channel;
  for (const Moments& m : moments) per_channel.emplace_back(m);
  for (Dataset* d : {&data.train, &data.test}) {
    for (std::size_t at = 0; at < d->features.size(); ++at) {
      float& x = d->features[at];
      x = per_channel[(at % std::size_t(d->dim)) / plane].apply(x);
    }
  }
}

std::vector<std::string> data_files(const DataSpec& spec) {
  if (spec.kind == DatasetKind::kGaussianMixture || spec.kind == DatasetKind::kLeastSquares) {
    return {};  // generated, whatever data.dir says
  }
  const std::string dir = spec.dir.empty() ? default_data_dir(spec.kind) : spec.dir;
  if (!std::filesystem::is_directory(dir)) {
    throw DataError("data set '" + to_string(spec.kind) + "': folder " + dir + " does not exist (" +
                    how_to_get(spec.kind, dir) + ")");
  }
  std::vector<std::string> names;
  if (spec.kind == DatasetKind::kCifar10) {
    for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
    names.push_back("test_batch.bin");
  } else {
    names = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte"};
  }
  std::vector<std::string> files;
  for (const auto& name : names) files.push_back(find_file(dir, name, spec.kind));
  return files;
}

TrainTest load_data(const DataSpec& spec) {
  const std::vector<std::string> files = data_files(spec);
  TrainTest data;
  bool pixels = true;
  switch (spec.kind) {
    case DatasetKind::kFashionMnist:
    case DatasetKind::kMnist: {
      const std::string name = to_string(spec.kind);
      data.train = read_idx(files[0], files[1], name + "-train");
      data.test = read_idx(files[2], files[3], name + "-test");
      break;
    }
    case DatasetKind::kCifar10: {
      data.train = read_cifar10({files.begin(), files.begin() + 5}, "cifar10-train");
      data.test = read_cifar10({files[5]}, "cifar10-test");
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
  if (spec.normalization == Normalization::kPerChannel) standardize_channels(data);
  return data;
}

}  // namespace fastk::learning
