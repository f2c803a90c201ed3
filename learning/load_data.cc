// From a DataSpec to train and test sets: which files, which generator, which normalisation.
#include <cmath>
#include <filesystem>
#include <numeric>
#include <optional>
#include <tuple>

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

// The arithmetic of load_data's normalisation, one value at a time, so that load_data (whole
// arrays) and load_data_rows (bytes, selected rows) give bit-identical features.
float scaled_pixel(float raw) { return raw * (1.0f / 255.0f); }

struct Moments {
  double sum = 0, sum_squares = 0;
  std::size_t count = 0;
  void add(float x) { sum += x, sum_squares += double(x) * x, ++count; }
};

struct Standardization {
  double mean = 0, inverse_std = 1;
  explicit Standardization(const Moments& m) {
    mean = m.sum / double(m.count);
    const double variance = std::max(m.sum_squares / double(m.count) - mean * mean, 0.0);
    inverse_std = variance > 0 ? 1.0 / std::sqrt(variance) : 1.0;
  }
  float apply(float x) const { return float((x - mean) * inverse_std); }
};

// Features of the rows `rows` of an IDX pair, scaled and (optionally) standardised as
// load_data does.
std::vector<float> normalised_rows(const IdxPair& pair, std::span<const std::int64_t> rows,
                                   const std::optional<Standardization>& standardization) {
  const std::size_t dim = std::size_t(pair.shape.dim());
  std::vector<float> out;
  out.reserve(rows.size() * dim);
  for (std::int64_t r : rows) {
    for (std::uint8_t b : pair.pixels.subspan(std::size_t(r) * dim, dim)) {
      const float x = scaled_pixel(float(b));
      out.push_back(standardization ? standardization->apply(x) : x);
    }
  }
  return out;
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

std::vector<std::string> data_files(const DataSpec& spec) {
  if (spec.kind == DatasetKind::kGaussianMixture || spec.kind == DatasetKind::kLeastSquares) {
    return {};  // generated, whatever data.dir says
  }
  const std::string dir = spec.dir.empty() ? default_data_dir(spec.kind) : spec.dir;
  if (!std::filesystem::is_directory(dir)) {
    throw DataError("data set '" + to_string(spec.kind) + "': folder " + dir +
                    " does not exist (set data.dir; README.md, 'Data sets', says how to fetch "
                    "it)");
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
  return data;
}

TrainTest load_data_rows(const DataSpec& spec, const RowSelector& select) {
  const bool idx = spec.kind == DatasetKind::kFashionMnist || spec.kind == DatasetKind::kMnist;
  if (!idx) {  // generated or CIFAR-10: load whole, then keep the rows
    TrainTest data = load_data(spec);
    const std::vector<std::int64_t> rows =
        select(data.train.labels, data.train.classes, data.train.size());
    data.train = select_rows(data.train, rows);
    return data;
  }
  const std::vector<std::string> files = data_files(spec);
  IdxPair train = read_idx_bytes(files[0], files[1]);
  IdxPair test = read_idx_bytes(files[2], files[3]);
  auto limit = [](IdxPair& pair, std::int64_t n) {
    if (n > 0 && n < std::int64_t(pair.labels.size())) pair.labels.resize(std::size_t(n));
  };
  limit(train, spec.train_limit);
  limit(test, spec.test_limit);
  std::optional<Standardization> standardization;
  if (spec.normalization == Normalization::kStandardize) {
    Moments moments;
    for (std::uint8_t b :
         train.pixels.first(train.labels.size() * std::size_t(train.shape.dim()))) {
      moments.add(scaled_pixel(float(b)));
    }
    standardization.emplace(moments);
  }
  const std::vector<std::int64_t> rows =
      select(train.labels, train.classes, std::int64_t(train.labels.size()));
  std::vector<std::int64_t> all_test(test.labels.size());
  std::iota(all_test.begin(), all_test.end(), 0);
  TrainTest data;
  const std::string name = to_string(spec.kind);
  for (auto [set, pair, chosen, suffix] :
       {std::tuple{&data.train, &train, std::span<const std::int64_t>(rows), "-train"},
        std::tuple{&data.test, &test, std::span<const std::int64_t>(all_test), "-test"}}) {
    set->name = name + suffix;
    set->classes = pair->classes;
    set->shape = pair->shape;
    set->dim = pair->shape.dim();
    set->features = normalised_rows(*pair, chosen, standardization);
    for (std::int64_t r : chosen) set->labels.push_back(pair->labels[std::size_t(r)]);
  }
  return data;
}

}  // namespace fastk::learning
