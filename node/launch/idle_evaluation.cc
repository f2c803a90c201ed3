#include "node/launch/idle_evaluation.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>

namespace fastk::node {
namespace {

// How often the thread looks for newly known instants when none was ready.
constexpr std::chrono::milliseconds kLookAgain{50};

}  // namespace

IdleEvaluation::IdleEvaluation(MeanModelEvaluator& evaluator, std::size_t threads)
    : evaluator_(evaluator) {
  for (std::size_t t = 0; t < threads; ++t) models_.push_back(evaluator.clone_model());
  for (auto& model : models_) {
    threads_.emplace_back(
        [this, &model = *model](const std::stop_token& stop) { work(stop, model); });
  }
}

void IdleEvaluation::work(const std::stop_token& stop, learning::Model& model) {
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (stop.stop_requested()) return;
    const sched_param priority{};
    // This thread only (pid 0 is the calling thread on Linux).
    if (sched_setscheduler(0, SCHED_IDLE, &priority) != 0) return;
    thread_ids_.insert(gettid());
  }
  try {
    while (!stop.stop_requested()) {
      MeanModelEvaluator::Step step = evaluator_.evaluate_oldest_known(model, stop);
      std::unique_lock<std::mutex> hold(mutex_);
      if (step.evaluation) made_.push_back(std::move(*step.evaluation));
      if (!step.took) nothing_ready_.wait_for(hold, stop, kLookAgain, [] { return false; });
    }
  } catch (...) {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (!error_) error_ = std::current_exception();
  }
  const std::lock_guard<std::mutex> hold(mutex_);
  thread_ids_.erase(gettid());  // gone: its id may soon name another thread
}

std::vector<metrics::Evaluation> IdleEvaluation::take() {
  const std::lock_guard<std::mutex> hold(mutex_);
  return std::exchange(made_, {});
}

void IdleEvaluation::wind_down() {
  const std::lock_guard<std::mutex> hold(mutex_);
  for (auto& thread : threads_) thread.request_stop();
  const sched_param priority{};
  // Refused without root or an RLIMIT_NICE that allows nice 0: the thread then finishes its
  // instant at idle priority, once the evaluation of the rest leaves a core.
  for (const pid_t id : thread_ids_) (void)sched_setscheduler(id, SCHED_OTHER, &priority);
  thread_ids_.clear();
}

std::vector<metrics::Evaluation> IdleEvaluation::stop() {
  wind_down();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return take();
}

}  // namespace fastk::node
