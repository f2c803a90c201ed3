// Small helpers shared by the learning tests: random data sets of a given shape.
#pragma once

#include "learning/dataset.h"
#include "learning/random.h"

namespace fastk::learning::testing {

// n samples of `shape` with standard normal features and labels below `classes` (or normal
// targets when classes == 0).
inline Dataset random_dataset(SampleShape shape, int classes, std::int64_t n, std::uint64_t seed) {
  Rng rng(seed);
  Dataset data;
  data.name = "random";
  data.shape = shape;
  data.dim = shape.dim();
  data.classes = classes;
  for (std::int64_t i = 0; i < n * data.dim; ++i) data.features.push_back(float(rng.normal()));
  for (std::int64_t i = 0; i < n; ++i) {
    if (classes > 0) {
      data.labels.push_back(std::int32_t(rng.below(std::uint64_t(classes))));
    } else {
      data.targets.push_back(float(rng.normal()));
    }
  }
  return data;
}

}  // namespace fastk::learning::testing
