#include "learning/sampler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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

SamplerState BatchSampler::state() const {
  return {order_, position_, batches_, drawn_, rng_.state()};
}

void BatchSampler::restore(SamplerState state) {
  std::vector<std::int64_t> mine = order_, theirs = state.order;
  std::sort(mine.begin(), mine.end());
  std::sort(theirs.begin(), theirs.end());
  if (mine != theirs) {
    throw std::invalid_argument("batch sampler state: its " + std::to_string(theirs.size()) +
                                " indices are not this sampler's " + std::to_string(mine.size()));
  }
  if (state.position > state.order.size() || state.batches < 0 || state.drawn < 0) {
    throw std::invalid_argument("batch sampler state: position or counters out of range");
  }
  rng_.restore(state.rng);
  order_ = std::move(state.order);
  position_ = state.position;
  batches_ = state.batches;
  drawn_ = state.drawn;
}

double BatchSampler::epochs() const { return double(drawn_) / double(order_.size()); }

}  // namespace fastk::learning
