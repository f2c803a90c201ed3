// What one peer of a run loads of the data set: the training rows its partition gives it and
// the test set it evaluates its final model on; and what the launcher loads (the test set
// alone). Both are bit-identical to load_data's rows, so that a real run and a simulation of
// the same config train and evaluate on the same numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "learning/data_sources.h"

namespace fastk::learning {

// The rows a peer keeps, in its order, given every training label (after train_limit).
// `labels` is empty and `classes` 0 for regression data.
using RowSelector = std::function<std::vector<std::int64_t>(std::span<const std::int32_t> labels,
                                                            int classes, std::int64_t samples)>;

// A peer's test set: it is used only at the peer's end. For IDX data the files are read and
// checked when it is made (a damaged file fails the start, not the end of a long run) and
// kept as read (mapped from the decompressed-file cache, byte_buffer.h); the floats are made
// on the first get(). Turning 10,000 test images into floats was a third of every peer's
// start-up, paid while all peers of a machine started on the same cores. Other data come
// whole with the training set.
struct PeerData;

class TestSet {
 public:
  explicit TestSet(Dataset ready);
  TestSet(TestSet&&) noexcept;
  TestSet& operator=(TestSet&&) noexcept;
  ~TestSet();

  const Dataset& get();

 private:
  struct Pending;
  friend PeerData load_peer_data(const DataSpec& spec,
                                 const std::function<std::vector<std::int64_t>(
                                     std::span<const std::int32_t>, int, std::int64_t)>& select);
  explicit TestSet(std::unique_ptr<Pending> pending);
  std::unique_ptr<Pending> pending_;  // until the first get()
  Dataset data_;
};

struct PeerData {
  Dataset train;
  TestSet test;
};

// For IDX files the training rows not picked are never turned into floats, so a peer's
// memory stays near its shard; generated and CIFAR-10 data are loaded whole, then cut.
PeerData load_peer_data(const DataSpec& spec, const RowSelector& select);

// The test set alone (the launcher's evaluation of the mean model).
Dataset load_test_set(const DataSpec& spec);

}  // namespace fastk::learning
