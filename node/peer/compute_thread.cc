#include "node/peer/compute_thread.h"

#include <sys/prctl.h>

#include <chrono>
#include <stdexcept>

namespace fastk::node::peer {

ComputeThread::ComputeThread(GradientFn gradient, SleepFn sleep, WakeFn wake, LossesFn losses)
    : gradient_(std::move(gradient)),
      sleep_(std::move(sleep)),
      wake_(std::move(wake)),
      losses_(std::move(losses)),
      thread_([this] { loop(); }) {}

ComputeThread::~ComputeThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void ComputeThread::submit(consensus::StartGradient request) { submit_job(std::move(request)); }

void ComputeThread::submit(consensus::StartValidation request) {
  if (!losses_) throw std::logic_error("ComputeThread: a validation, and no way to compute it");
  submit_job(std::move(request));
}

void ComputeThread::submit_job(Job job) {
  {
    std::lock_guard lock(mutex_);
    if (in_flight_) throw std::logic_error("ComputeThread: a job is already in flight");
    in_flight_ = true;
    job_.emplace(std::move(job));
  }
  work_.notify_one();
}

std::optional<ComputedJob> ComputeThread::poll() {
  std::lock_guard lock(mutex_);
  std::optional<ComputedJob> out = std::move(done_);
  done_.reset();
  if (out) in_flight_ = false;
  return out;
}

void ComputeThread::recycle(std::vector<float> buffer) {
  if (buffer.capacity() == 0) return;  // nothing to reuse: keep the spare there is
  std::lock_guard lock(mutex_);
  spare_ = std::move(buffer);
}

bool ComputeThread::busy() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

void ComputeThread::loop() {
  // An injected sleep should last what the straggler model says: the kernel's default timer
  // slack (50 us) made a 0.6 ms sleep end 75 us late. 1 ns asks for the timer itself.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  while (true) {
    std::optional<Job> job;
    std::vector<float> buffer;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [this] { return stopping_ || job_.has_value(); });
      if (stopping_) return;
      job = std::move(job_);
      job_.reset();
      // The spare gradient buffer is for the next gradient: a validation leaves it there.
      if (std::holds_alternative<consensus::StartGradient>(*job)) buffer = std::move(spare_);
    }
    std::optional<ComputedJob> out =
        std::visit(consensus::ActionHandlers{
                       [&](consensus::StartGradient& g) { return run(g, std::move(buffer)); },
                       [&](consensus::StartValidation& v) { return run(v); }},
                   *job);
    if (!out) return;  // stopped during an injected sleep
    {
      std::lock_guard lock(mutex_);
      done_ = std::move(out);
    }
    wake_();
  }
}

std::optional<ComputedJob> ComputeThread::run(consensus::StartGradient& job,
                                              std::vector<float> buffer) {
  using Clock = std::chrono::steady_clock;
  ComputedGradient out;
  out.iteration = job.iteration;
  const auto start = Clock::now();
  out.step = gradient_(job, std::move(buffer));
  out.compute_s = std::chrono::duration<double>(Clock::now() - start).count();
  const double sleep_s = sleep_(job.iteration, job.work);
  if (sleep_s > 0) {
    const auto woken = Clock::now();
    std::unique_lock lock(mutex_);
    // Interruptible sleep: a stopping peer does not wait out an injected straggle.
    work_.wait_for(lock, std::chrono::duration<double>(sleep_s), [this] { return stopping_; });
    if (stopping_) return std::nullopt;
    out.injected_s = std::chrono::duration<double>(Clock::now() - woken).count();
  }
  return out;
}

// No injected sleep: a slowdown stands for a slow gradient, and the simulator charges none.
std::optional<ComputedJob> ComputeThread::run(consensus::StartValidation& job) {
  const auto start = std::chrono::steady_clock::now();
  ComputedLosses out{job.iteration, losses_(job), 0};
  out.compute_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace fastk::node::peer
