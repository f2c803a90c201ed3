#include "simulation/model_pool.h"

#include <utility>

namespace fastk::simulation {

// A pool's buffer: its values go back to the pool when the last holder lets go.
class PooledParams final : public consensus::MutableParamBuffer {
 public:
  PooledParams(std::shared_ptr<ModelPool> pool, std::vector<float> values)
      : pool_(std::move(pool)), values_(std::move(values)) {}
  ~PooledParams() override { pool_->give_back(std::move(values_)); }
  PooledParams(const PooledParams&) = delete;
  PooledParams& operator=(const PooledParams&) = delete;
  std::span<const float> values() const override { return values_; }

 private:
  std::span<float> writable_values() override { return values_; }
  std::shared_ptr<ModelPool> pool_;
  std::vector<float> values_;
};

std::shared_ptr<consensus::MutableParamBuffer> ModelPool::take() {
  std::vector<float> values;
  if (!free_.empty()) {
    values = std::move(free_.back());
    free_.pop_back();
  } else {
    ++made_;
  }
  if (values.size() != size_) values.assign(size_, 0.0f);
  return std::make_shared<PooledParams>(shared_from_this(), std::move(values));
}

consensus::BufferSource ModelPool::source() {
  return [pool = shared_from_this()] { return pool->take(); };
}

std::size_t ModelPool::free_buffers() const { return free_.size(); }

void ModelPool::give_back(std::vector<float> values) { free_.push_back(std::move(values)); }

}  // namespace fastk::simulation
