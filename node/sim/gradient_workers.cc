#include "node/sim/gradient_workers.h"

#include <algorithm>

#include "consensus/gradient_stats.h"

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
  const std::size_t p = model.num_parameters();
  std::vector<float> grad(p);
  const int pieces = std::min<int>(micro_batches_, static_cast<int>(task.batch.size()));
  if (pieces <= 1) {
    task.loss = model.loss_and_gradient(task.params->values(), {&train_, task.batch}, grad);
    task.result.gradient = std::move(grad);
    return;
  }
  // Equal-size micro-batches (the remainder goes to the last ones), averaged with weights
  // proportional to their sizes only when they are equal; sizes differ by at most one.
  consensus::MicroBatchAccumulator acc(p);
  std::span<const std::int64_t> all(task.batch);
  std::size_t first = 0;
  double loss = 0;
  for (int m = 0; m < pieces; ++m) {
    const std::size_t size =
        (task.batch.size() + static_cast<std::size_t>(m)) / static_cast<std::size_t>(pieces);
    loss +=
        model.loss_and_gradient(task.params->values(), {&train_, all.subspan(first, size)}, grad) *
        static_cast<double>(size);
    acc.add(grad);
    first += size;
  }
  task.loss = loss / static_cast<double>(task.batch.size());
  task.result.gradient.assign(p, 0.0f);
  task.result.stats = acc.finish(task.result.gradient);
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
