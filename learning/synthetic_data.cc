// Synthetic data sets for fast tests and protocol experiments: generated from a seed, no
// files. Both have a known structure: separable-ish clusters, and a linear model with noise.
#include <cmath>
#include <stdexcept>

#include "learning/data_sources.h"
#include "learning/random.h"

namespace fastk::learning {
namespace {

Dataset empty_vector_set(const std::string& name, int dim, int classes) {
  Dataset data;
  data.name = name;
  data.dim = dim;
  data.classes = classes;
  data.shape = {1, 1, dim};
  return data;
}

void check_sizes(std::int64_t train, std::int64_t test, int dim) {
  if (train < 1 || test < 0 || dim < 1) {
    throw std::invalid_argument(
        "synthetic data: need train_samples >= 1, test_samples >= 0 and "
        "dim >= 1");
  }
}

}  // namespace

TrainTest make_gaussian_mixture(std::int64_t train_samples, std::int64_t test_samples, int dim,
                                int classes, double separation, std::uint64_t seed) {
  check_sizes(train_samples, test_samples, dim);
  if (classes < 2) throw std::invalid_argument("gaussian_mixture: need classes >= 2");
  Rng rng(seed);
  // Class means: random directions scaled to length `separation`.
  std::vector<double> means(std::size_t(classes) * dim);
  for (int k = 0; k < classes; ++k) {
    double norm = 0;
    for (int d = 0; d < dim; ++d) {
      double& m = means[std::size_t(k) * dim + d];
      m = rng.normal();
      norm += m * m;
    }
    for (int d = 0; d < dim; ++d) means[std::size_t(k) * dim + d] *= separation / std::sqrt(norm);
  }
  auto draw = [&](std::int64_t n) {
    Dataset data = empty_vector_set("gaussian_mixture", dim, classes);
    data.features.reserve(std::size_t(n) * dim);
    for (std::int64_t i = 0; i < n; ++i) {
      const int k = int(rng.below(std::uint64_t(classes)));
      data.labels.push_back(k);
      for (int d = 0; d < dim; ++d) {
        data.features.push_back(float(means[std::size_t(k) * dim + d] + rng.normal()));
      }
    }
    return data;
  };
  TrainTest out;
  out.train = draw(train_samples);
  out.test = draw(test_samples);
  return out;
}

TrainTest make_least_squares(std::int64_t train_samples, std::int64_t test_samples, int dim,
                             double noise, std::uint64_t seed) {
  check_sizes(train_samples, test_samples, dim);
  Rng rng(seed);
  std::vector<double> w(static_cast<std::size_t>(dim));
  for (double& v : w) v = rng.normal();
  const double bias = rng.normal();
  auto draw = [&](std::int64_t n) {
    Dataset data = empty_vector_set("least_squares", dim, 0);
    data.features.reserve(std::size_t(n) * dim);
    for (std::int64_t i = 0; i < n; ++i) {
      double y = bias;
      for (int d = 0; d < dim; ++d) {
        const double x = rng.normal();
        data.features.push_back(float(x));
        y += w[std::size_t(d)] * x;
      }
      data.targets.push_back(float(y + noise * rng.normal()));
    }
    return data;
  };
  TrainTest out;
  out.train = draw(train_samples);
  out.test = draw(test_samples);
  return out;
}

}  // namespace fastk::learning
