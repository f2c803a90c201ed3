// load_peer_data and load_test_set (what a real peer and the launcher load) must give exactly
// load_data's rows, so that a real
// run and a simulation of the same config train on the same numbers.
#include <gtest/gtest.h>

#include <numeric>

#include "learning/data_sources.h"
#include "learning/peer_data.h"
#include "tests/support/temp_dir.h"

namespace fastk::learning {
namespace {

void expect_same(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.classes, b.classes);
  EXPECT_EQ(a.labels, b.labels);
  ASSERT_EQ(a.features.size(), b.features.size());
  for (std::size_t i = 0; i < a.features.size(); ++i) {
    ASSERT_EQ(a.features[i], b.features[i]) << "feature " << i;  // bit-identical, no tolerance
  }
}

// Every third row, backwards: order and gaps both matter.
RowSelector every_third_backwards(std::vector<std::int64_t>& picked) {
  return [&picked](std::span<const std::int32_t> labels, int classes, std::int64_t samples) {
    EXPECT_EQ(samples, std::int64_t(labels.size()));
    EXPECT_EQ(classes, 10);
    picked.clear();
    for (std::int64_t i = std::int64_t(labels.size()) - 1; i >= 0; i -= 3) picked.push_back(i);
    return picked;
  };
}

class DataRows : public ::testing::TestWithParam<Normalization> {};

TEST_P(DataRows, IdxRowsEqualTheFullLoadsRows) {
  const auto dir = testutil::fresh_test_dir("fastk_rows");
  const int rows = 3, cols = 4, train = 11, test = 5;
  std::vector<std::uint8_t> pixels(train * rows * cols), labels(train);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::uint8_t((i * 37 + 11) % 256);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = std::uint8_t(i % 10);
  write_idx(dir / "train-images-idx3-ubyte", dir / "train-labels-idx1-ubyte", rows, cols, pixels,
            labels);
  pixels.resize(test * rows * cols);
  labels.resize(test);
  write_idx(dir / "t10k-images-idx3-ubyte", dir / "t10k-labels-idx1-ubyte", rows, cols, pixels,
            labels);
  DataSpec spec;
  spec.kind = DatasetKind::kMnist;
  spec.dir = dir.string();
  spec.normalization = GetParam();
  spec.train_limit = 10;  // the statistics must cover the limited set only, in both paths

  std::vector<std::int64_t> picked;
  PeerData some = load_peer_data(spec, every_third_backwards(picked));
  const TrainTest all = load_data(spec);
  ASSERT_EQ(picked.size(), 4u);  // rows 9, 6, 3, 0 of the 10 kept
  expect_same(some.train, select_rows(all.train, picked));
  // Each kept row knows its index in the whole set: what keys its augmentation.
  EXPECT_EQ(some.train.source_rows, picked);
  expect_same(some.test.get(), all.test);
  expect_same(load_test_set(spec), all.test);
}

// The test set of a peer is read and checked at its start: a damaged test file fails there,
// not when the peer evaluates at the end of its run; once made, it is independent of the files.
TEST(DataRowsTestSet, ADamagedTestFileFailsTheStartAndALaterChangeIsNotSeen) {
  const auto dir = testutil::fresh_test_dir("fastk_rows");
  const int rows = 2, cols = 2, samples = 6;
  std::vector<std::uint8_t> pixels(samples * rows * cols, 7), labels(samples, 3);
  write_idx(dir / "train-images-idx3-ubyte", dir / "train-labels-idx1-ubyte", rows, cols, pixels,
            labels);
  write_idx(dir / "t10k-images-idx3-ubyte", dir / "t10k-labels-idx1-ubyte", rows, cols, pixels,
            labels);
  DataSpec spec;
  spec.kind = DatasetKind::kMnist;
  spec.dir = dir.string();
  const auto keep_all = [](std::span<const std::int32_t> l, int, std::int64_t) {
    std::vector<std::int64_t> all(l.size());
    std::iota(all.begin(), all.end(), 0);
    return all;
  };
  PeerData data = load_peer_data(spec, keep_all);
  labels.back() = 12;  // not a class: the label file is now damaged
  write_idx(dir / "t10k-images-idx3-ubyte", dir / "t10k-labels-idx1-ubyte", rows, cols, pixels,
            labels);
  EXPECT_THROW(load_peer_data(spec, keep_all), DataError);
  EXPECT_EQ(data.test.get().labels, std::vector<std::int32_t>(samples, 3));
}

INSTANTIATE_TEST_SUITE_P(Normalizations, DataRows,
                         ::testing::Values(Normalization::kScale, Normalization::kStandardize,
                                           Normalization::kPerChannel));

TEST(DataRowsGenerated, GeneratedSetsKeepTheChosenRows) {
  DataSpec spec;
  spec.kind = DatasetKind::kGaussianMixture;
  spec.train_samples = 30;
  spec.test_samples = 7;
  spec.dim = 3;
  spec.classes = 10;
  std::vector<std::int64_t> picked;
  PeerData some = load_peer_data(spec, every_third_backwards(picked));
  const TrainTest all = load_data(spec);
  expect_same(some.train, select_rows(all.train, picked));
  EXPECT_EQ(some.train.source_rows, picked);
  expect_same(some.test.get(), all.test);
  expect_same(load_test_set(spec), all.test);
}

}  // namespace
}  // namespace fastk::learning
