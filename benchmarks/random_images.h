// Random pixels and labels of a given image shape: the models' cost does not depend on what
// the data mean, and the benchmarks need no data set on disk.
#pragma once

#include <cstdint>

#include "learning/dataset.h"
#include "learning/random.h"

namespace fastk::bench {

inline learning::Dataset random_images(learning::SampleShape shape, std::int64_t n) {
  learning::Rng rng(1);
  learning::Dataset data;
  data.name = "random";
  data.shape = shape;
  data.dim = shape.dim();
  data.classes = 10;
  for (std::int64_t i = 0; i < n * data.dim; ++i) data.features.push_back(float(rng.uniform()));
  for (std::int64_t i = 0; i < n; ++i) data.labels.push_back(std::int32_t(rng.below(10)));
  return data;
}

}  // namespace fastk::bench
