#include "node/sim/gradient_workers.h"

#include <algorithm>

#include "node/training/gradient_step.h"

namespace fastk::node::sim {

GradientWorkers::GradientWorkers(const learning::Model& model, const learning::Dataset& train,
                                 std::vector<learning::BatchSampler> samplers, int threads,
                                 int micro_batches)
    : train_(train),
      samplers_(std::move(samplers)),
      micro_batches_(std::max(1, micro_batches)),
      last_loss_(samplers_.size(), 0.0) {
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

void GradientWorkers::compute(learning::Model& model, Task& task) {
  training::GradientStep step =
      training::compute_gradient(model, train_, task.batch, task.params->values(), micro_batches_);
  task.loss = step.loss;
  task.result = std::move(step.result);
}

void GradientWorkers::begin(int peer, std::int64_t k, const consensus::Params& params) {
  auto task = std::make_unique<Task>();
  task->peer = peer;
  task->k = k;
  task->params = params;
  const auto batch = samplers_[static_cast<std::size_t>(peer)].next();
  task->batch.assign(batch.begin(), batch.end());
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
