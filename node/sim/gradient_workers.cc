#include "node/sim/gradient_workers.h"

#include <algorithm>
#include <stdexcept>

#include "node/training/gradient_step.h"
#include "node/training/peer_trainer.h"

namespace fastk::node::sim {

GradientWorkers::GradientWorkers(const learning::Model& model, const learning::Dataset& train,
                                 std::vector<training::PeerSamples> samples, int threads)
    : train_(train), samples_(std::move(samples)), last_loss_(samples_.size(), 0.0) {
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
      task.partition_batches.empty()
          ? training::compute_gradient(model, train_, task.batch, task.params->values(), task.stats,
                                       std::move(task.buffer))
          : training::compute_partition_gradients(model, train_, task.partition_batches,
                                                  task.params->values());
  task.loss = step.loss;
  task.result = std::move(step.result);
}

void GradientWorkers::recycle(std::vector<float> gradient) {
  if (gradient.empty() || spare_gradients_.size() >= samples_.size()) return;
  spare_gradients_.push_back(std::move(gradient));
}

void GradientWorkers::begin(int peer, const consensus::StartGradient& request) {
  const std::int64_t k = request.iteration;
  auto task = std::make_unique<Task>();
  task->peer = peer;
  task->k = k;
  task->params = request.params;
  task->stats = request.gradient_stats;
  if (request.partitions.empty() && !spare_gradients_.empty()) {
    task->buffer = std::move(spare_gradients_.back());
    spare_gradients_.pop_back();
  }
  training::PeerSamples& samples = samples_.at(static_cast<std::size_t>(peer));
  if (request.partitions.empty()) {
    task->batch = samples.to_rows(samples.own.next());
  } else {
    const int batch_size = samples.own.batch_size();
    task->partition_batches = training::draw_partition_batches(
        request, batch_size, [&](int r) -> learning::BatchSampler& {
          const auto it = samples.partitions.find(r);
          if (it == samples.partitions.end()) {
            throw std::logic_error("GradientWorkers: peer " + std::to_string(peer) +
                                   " does not store partition " + std::to_string(r));
          }
          return it->second;
        });
    for (auto& batch : task->partition_batches) batch = samples.to_rows(batch);
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

// On the calling thread with its own model instance (a validation batch is small).
std::vector<double> GradientWorkers::losses(int peer, const consensus::StartValidation& request) {
  const training::PeerSamples& samples = samples_.at(static_cast<std::size_t>(peer));
  const auto positions = training::validation_positions(samples.own_size, samples.validation_seed,
                                                        request.iteration, request.batch);
  return training::validation_losses(*models_[0], train_, samples.to_rows(positions), request);
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
