// Model buffers shared by every simulated peer. A peer's protocol keeps up to four spare
// buffers of its own (consensus/iteration_core.h), which a real peer can afford and 100,000
// simulated peers cannot (12 GB of idle models with logistic regression): here a buffer goes
// back to one free list when its last holder lets go, so the simulator holds as many models
// as are alive (each peer's own, and the older ones its neighbours' slots still hold) plus
// the free ones left from the busiest moment. Like the rest of the engine it belongs to the
// event loop's thread: every holder lets go there (node/sim's gradient workers read a
// model through the task that holds it, and the loop drops the task).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "consensus/params.h"

namespace fastk::simulation {

class ModelPool : public std::enable_shared_from_this<ModelPool> {
 public:
  // Buffers of `size` values; make one with std::make_shared (buffers keep the pool alive).
  explicit ModelPool(std::size_t size) : size_(size) {}
  // A buffer nobody else holds, its values whatever they were (the protocol overwrites all).
  std::shared_ptr<consensus::MutableParamBuffer> take();
  // A BufferSource (consensus/params.h) that takes from this pool.
  consensus::BufferSource source();
  std::size_t free_buffers() const;
  std::size_t buffers_made() const { return made_; }

 private:
  friend class PooledParams;
  void give_back(std::vector<float> values);

  std::size_t size_;
  std::vector<std::vector<float>> free_;
  std::size_t made_ = 0;
};

}  // namespace fastk::simulation
