#include "node/sim/gradient_workers.h"

#include <algorithm>
#include <stdexcept>

#include "node/training/gradient_step.h"
#include "node/training/peer_trainer.h"

namespace fastk::node::sim {

GradientWorkers::GradientWorkers(const learning::Model& model, const learning::Dataset& train,
                                 std::vector<learning::BatchSampler> samplers, int threads)
    : train_(train), samplers_(std::move(samplers)), last_loss_(samplers_.size(), 0.0) {
  const int workers = threads <= 1 ? 0 : threads;
  models_.push_back(model.clone());
  for (int t = 0; t < workers; ++t) models_.push_back(model.clone());
  for (int t = 0; t < workers; ++t) {
    threads_.emplace_back([this, t] { worker_loop(static_cast<std::size_t>(t + 1)); });
  }
}

GradientWorkers::~GradientWorkers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void GradientWorkers::enable_partitions(const learning::Partition& partition, int batch_size,
                                        std::uint64_t seed) {
  partition_ = &partition;
  batch_size_ = batch_size;
  seed_ = seed;
}

void GradientWorkers::compute(learning::Model& model, Task& task) {
  training::GradientStep step =
      task.partition_batches.empty()
          ? training::compute_gradient(model, train_, task.batch, task.params->values(), task.stats)
          : training::compute_partition_gradients(model, train_, task.partition_batches,
                                                  task.params->values());
  task.loss = step.loss;
  task.result = std::move(step.result);
}

void GradientWorkers::begin(int peer, const consensus::StartGradient& request) {
  const std::int64_t k = request.iteration;
  auto task = std::make_unique<Task>();
  task->peer = peer;
  task->k = k;
  task->params = request.params;
  task->stats = request.gradient_stats;
  if (request.partitions.empty()) {
    const auto batch = samplers_[static_cast<std::size_t>(peer)].next();
    task->batch.assign(batch.begin(), batch.end());
  } else {
    if (!partition_) throw std::logic_error("GradientWorkers: partitions requested, none given");
    task->partition_batches = training::draw_partition_batches(
        request, batch_size_, [&](int r) -> learning::BatchSampler& {
          auto it = partition_samplers_.find({peer, r});
          if (it == partition_samplers_.end()) {
            it = partition_samplers_
                     .emplace(std::pair{peer, r},
                              learning::BatchSampler(
                                  partition_->peer_indices.at(static_cast<std::size_t>(r)),
                                  batch_size_, training::peer_seed(seed_, r)))
                     .first;
          }
          return it->second;
        });
  }
  Task* raw = task.get();
  tasks_[{peer, k}] = std::move(task);
  if (threads_.empty()) return;  // computed in collect()
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(raw);
  }
  work_ready_.notify_one();
}

void GradientWorkers::worker_loop(std::size_t index) {
  learning::Model& model = *models_[index];
  for (;;) {
    Task* task = nullptr;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = queue_.front();
      queue_.pop_front();
    }
    compute(model, *task);
    {
      std::lock_guard lock(mutex_);
      task->done = true;
    }
    work_done_.notify_all();
  }
}

consensus::GradientResult GradientWorkers::collect(int peer, std::int64_t k) {
  auto it = tasks_.find({peer, k});
  Task& task = *it->second;
  if (threads_.empty()) {
    compute(*models_[0], task);
  } else {
    std::unique_lock lock(mutex_);
    // Pull the task forward if no worker has started it: the caller would wait anyway.
    auto queued = std::find(queue_.begin(), queue_.end(), &task);
    if (queued != queue_.end()) {
      queue_.erase(queued);
      lock.unlock();
      compute(*models_[0], task);
    } else {
      work_done_.wait(lock, [&] { return task.done; });
    }
  }
  last_loss_[static_cast<std::size_t>(peer)] = task.loss;
  consensus::GradientResult result = std::move(task.result);
  tasks_.erase(it);
  return result;
}

}  // namespace fastk::node::sim
