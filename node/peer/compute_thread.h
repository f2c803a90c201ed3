// The thread that computes a real peer's gradients, so that communication on the I/O thread
// overlaps computation, and the losses of a validation ([consensus] validate). At most one
// job is in flight (the protocol asks for one gradient per iteration, and validates only
// once it has it). Injected straggling (the [stragglers] compute part) is applied here as a real
// sleep after the computation, of (f - 1) times the calibrated base gradient time for a
// slowdown factor f: what the injection adds does not depend on how long this gradient took
// (OS noise, another peer on the core), as in `fastk sim`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include "consensus/actions.h"
#include "node/training/gradient_step.h"

namespace fastk::node::peer {

struct ComputedGradient {
  std::int64_t iteration = 0;
  training::GradientStep step;
  double compute_s = 0;   // measured time of the computation itself
  double injected_s = 0;  // extra sleep from the straggler model, as slept
};

// The losses a StartValidation asked for.
struct ComputedLosses {
  std::int64_t iteration = 0;
  std::vector<double> losses;
  double compute_s = 0;
};

using ComputedJob = std::variant<ComputedGradient, ComputedLosses>;

class ComputeThread {
 public:
  // The gradient(s) a StartGradient asks for (coded peers: one per listed partition),
  // written into `buffer` where it fits (a recycled gradient vector, or empty).
  using GradientFn = std::function<training::GradientStep(const consensus::StartGradient&,
                                                          std::vector<float> buffer)>;
  // Injected seconds after gradient k of `work` gradients' worth (StartGradient::work).
  using SleepFn = std::function<double(std::int64_t k, double work)>;

  // Called after each job (on this thread), so the I/O thread's receive() returns at once.
  using WakeFn = std::function<void()>;
  // The losses of a StartValidation's models; empty: the peer validates nothing.
  using LossesFn = std::function<std::vector<double>(const consensus::StartValidation&)>;

  ComputeThread(GradientFn gradient, SleepFn sleep, WakeFn wake, LossesFn losses = {});
  ~ComputeThread();  // abandons a gradient in flight (after it finishes) and joins
  ComputeThread(const ComputeThread&) = delete;
  ComputeThread& operator=(const ComputeThread&) = delete;

  // Throw std::logic_error if a job is already in flight (a runtime bug), or for a
  // validation without a LossesFn.
  void submit(consensus::StartGradient request);
  void submit(consensus::StartValidation request);
  // The finished job, if any; never blocks.
  std::optional<ComputedJob> poll();
  // Hands back a gradient vector the caller is done with, to be written by the next
  // gradient instead of a freshly allocated one. An empty vector changes nothing.
  void recycle(std::vector<float> buffer);
  bool busy() const;

 private:
  using Job = std::variant<consensus::StartGradient, consensus::StartValidation>;
  void loop();
  void submit_job(Job job);
  // nullopt: stopped during the gradient's injected sleep.
  std::optional<ComputedJob> run(consensus::StartGradient& job, std::vector<float> buffer);
  std::optional<ComputedJob> run(consensus::StartValidation& job);

  GradientFn gradient_;
  SleepFn sleep_;
  WakeFn wake_;
  LossesFn losses_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::optional<Job> job_;
  std::optional<ComputedJob> done_;
  std::vector<float> spare_;  // a recycled gradient buffer
  bool in_flight_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fastk::node::peer
