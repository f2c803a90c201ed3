#include "learning/sampler.h"

#include <stdexcept>

namespace fastk::learning {

BatchSampler::BatchSampler(std::vector<std::int64_t> indices, int batch_size, std::uint64_t seed)
    : order_(std::move(indices)), position_(0), batch_size_(batch_size), rng_(seed) {
  if (order_.empty()) throw std::invalid_argument("batch sampler: no sample indices");
  if (batch_size < 1) throw std::invalid_argument("batch sampler: batch size must be >= 1");
  batch_.resize(std::size_t(batch_size));
  rng_.shuffle(std::span(order_));
}

std::span<const std::int64_t> BatchSampler::next() { return next(batch_size_); }

std::span<const std::int64_t> BatchSampler::next(int count) {
  if (count < 1) throw std::invalid_argument("batch sampler: batch size must be >= 1");
  batch_.resize(std::size_t(count));
  drawn_ += count;
  for (auto& slot : batch_) {
    if (position_ == order_.size()) {
      rng_.shuffle(std::span(order_));
      position_ = 0;
    }
    slot = order_[position_++];
  }
  ++batches_;
  return batch_;
}

double BatchSampler::epochs() const { return double(drawn_) / double(order_.size()); }

}  // namespace fastk::learning
