// Seeded mini-batches over one peer's sample indices: each epoch is a fresh shuffle of the
// indices cut into batches (the last, short remainder is carried into the next epoch, so
// every batch has exactly batch_size samples).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "learning/random.h"

namespace fastk::learning {

// Where a sampler is in its stream: the current epoch's order, the next position in it, the
// counters and the generator (a checkpoint saves it; restore() continues the same stream).
struct SamplerState {
  std::vector<std::int64_t> order;
  std::uint64_t position = 0;
  std::int64_t batches = 0;
  std::int64_t drawn = 0;
  RngState rng;
};

class BatchSampler {
 public:
  // Throws std::invalid_argument if indices is empty or batch_size < 1.
  BatchSampler(std::vector<std::int64_t> indices, int batch_size, std::uint64_t seed);
  // The next batch; valid until the next call.
  std::span<const std::int64_t> next();
  // The next `count` samples (a coded peer spreads one batch over several partitions).
  std::span<const std::int64_t> next(int count);
  // Completed passes over the indices (fractional), and batches handed out.
  double epochs() const;
  std::int64_t batches() const { return batches_; }
  int batch_size() const { return batch_size_; }
  std::int64_t num_indices() const { return std::int64_t(order_.size()); }
  SamplerState state() const;
  // Throws std::invalid_argument naming what does not fit: a state of another index set (not
  // a permutation of this one's indices), a position past the end, negative counters.
  void restore(SamplerState state);

 private:
  std::vector<std::int64_t> order_;
  std::vector<std::int64_t> batch_;
  std::size_t position_;  // next unused position in order_
  std::int64_t batches_ = 0;
  std::int64_t drawn_ = 0;
  int batch_size_;
  Rng rng_;
};

}  // namespace fastk::learning
