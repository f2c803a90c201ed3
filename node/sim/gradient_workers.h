// Real gradients for simulated peers. begin() draws the peer's next mini-batch (on the
// calling thread, so sampling follows the deterministic event order) and hands the
// computation to a worker thread with its own model instance; collect() waits for it. A
// gradient depends only on the parameters and the batch, so the results are bit-identical
// whatever the number of threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "learning/dataset.h"
#include "learning/model.h"
#include "learning/partition.h"
#include "learning/sampler.h"
#include "node/training/peer_samples.h"
#include "simulation/virtual_network.h"

namespace fastk::node::sim {

class GradientWorkers final : public simulation::GradientSource {
 public:
  // `threads` <= 1 computes on the calling thread inside collect(). A request's
  // gradient_stats adds the gradient-noise estimates (consensus::GradientStats) from the
  // same pass.
  // `samples`: each peer's, from training::peer_samples (as real peers draw theirs), over
  // `train`, the whole training set.
  GradientWorkers(const learning::Model& model, const learning::Dataset& train,
                  std::vector<training::PeerSamples> samples, int threads);
  ~GradientWorkers() override;
  GradientWorkers(const GradientWorkers&) = delete;
  GradientWorkers& operator=(const GradientWorkers&) = delete;

  void begin(int peer, const consensus::StartGradient& request) override;
  consensus::GradientResult collect(int peer, std::int64_t k) override;
  std::vector<double> losses(int peer, const consensus::StartValidation& request) override;
  // Kept for a later plain gradient to be computed into (at most one per peer in all: a
  // gradient per peer is what 100,000 simulated peers can afford, two is not).
  void recycle(std::vector<float> gradient) override;
  // Mini-batch loss of the gradient last collected for `peer`.
  double last_loss(int peer) const { return last_loss_[static_cast<std::size_t>(peer)]; }

 private:
  struct Task {
    int peer = 0;
    std::int64_t k = 0;
    consensus::Params params;
    std::vector<std::int64_t> batch;
    std::vector<std::vector<std::int64_t>> partition_batches;  // coded: one per partition
    bool stats = false;                                        // GradientStats too
    std::vector<float> buffer;                                 // recycled, to compute into
    bool done = false;
    double loss = 0;
    consensus::GradientResult result;
  };
  void compute(learning::Model& model, Task& task);
  void worker_loop(std::size_t index);

  const learning::Dataset& train_;
  std::vector<training::PeerSamples> samples_;
  std::vector<std::unique_ptr<learning::Model>> models_;  // one per thread (index 0: caller)
  std::vector<double> last_loss_;
  std::vector<std::vector<float>> spare_gradients_;  // recycled; taken in begin()
  std::map<std::pair<int, std::int64_t>, std::unique_ptr<Task>> tasks_;

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<Task*> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace fastk::node::sim
