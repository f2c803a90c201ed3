#include "node/peer/compute_thread.h"

#include <sys/prctl.h>

#include <chrono>
#include <stdexcept>

namespace fastk::node::peer {

ComputeThread::ComputeThread(GradientFn gradient, SleepFn sleep, WakeFn wake)
    : gradient_(std::move(gradient)),
      sleep_(std::move(sleep)),
      wake_(std::move(wake)),
      thread_([this] { loop(); }) {}

ComputeThread::~ComputeThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void ComputeThread::submit(consensus::StartGradient request) {
  {
    std::lock_guard lock(mutex_);
    if (in_flight_) throw std::logic_error("ComputeThread: a gradient is already in flight");
    in_flight_ = true;
    job_.emplace(std::move(request));
  }
  work_.notify_one();
}

std::optional<ComputedGradient> ComputeThread::poll() {
  std::lock_guard lock(mutex_);
  std::optional<ComputedGradient> out = std::move(done_);
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
  using Clock = std::chrono::steady_clock;
  // An injected sleep should last what the straggler model says: the kernel's default timer
  // slack (50 us) made a 0.6 ms sleep end 75 us late. 1 ns asks for the timer itself.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  while (true) {
    consensus::StartGradient job;
    std::vector<float> buffer;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [this] { return stopping_ || job_.has_value(); });
      if (stopping_) return;
      job = std::move(*job_);
      job_.reset();
      buffer = std::move(spare_);
    }
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
      if (stopping_) return;
      out.injected_s = std::chrono::duration<double>(Clock::now() - woken).count();
    }
    {
      std::lock_guard lock(mutex_);
      done_ = std::move(out);
    }
    wake_();
  }
}

}  // namespace fastk::node::peer
