// The compute-only baseline of the peers benchmark (experiments/bench_peers.py): the time
// one process needs to compute the mini-batch gradients of a run (the config's data set,
// model and batch size) on a few threads, with no communication at all. Each trainer trains
// its own shard like a peer (PeerTrainer, the peers' own gradient code) and takes an SGD
// step after each gradient, so the parameters move as in training.
//
//   build/benchmarks/gradient_throughput CONFIG [GRADIENTS=4800] [THREADS=2] [TRAINERS]
//
// TRAINERS (default: one per thread) splits the data and the gradients over that many
// trainers, each with its own shard and model; with TRAINERS = the run's peer count they
// are the run's own gradients (8 shards, 8 models, 600 each), the threads taking their
// trainers in turns, one gradient each, as peers sharing a core do.
// prints: gradients=4800 threads=2 trainers=2 seconds=12.345 (data loading is not timed)
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/training/peer_trainer.h"

namespace {

using fastk::node::training::PeerTrainer;

int usage() {
  std::cerr << "usage: gradient_throughput CONFIG [GRADIENTS=4800] [THREADS=2] [TRAINERS]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) return usage();
  const long gradients = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 4800;
  const int threads = argc > 3 ? static_cast<int>(std::strtol(argv[3], nullptr, 10)) : 2;
  const int count = argc > 4 ? static_cast<int>(std::strtol(argv[4], nullptr, 10)) : threads;
  if (gradients < 1 || threads < 1 || count < threads || count % threads != 0) return usage();
  try {
    const auto config = fastk::node::load_config(argv[1]);
    std::vector<std::unique_ptr<PeerTrainer>> trainers;
    std::vector<std::vector<float>> params;
    for (int t = 0; t < count; ++t) {
      trainers.push_back(
          std::make_unique<PeerTrainer>(config.data, config.model, config.optimizer, count, t));
      params.push_back(trainers.back()->initial());
    }
    const float lr = static_cast<float>(config.optimizer.lr);
    std::barrier start(threads + 1);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      // Thread t computes its share: gradients / threads, plus one of the remainder, taking
      // its trainers t, t + threads, ... in turns.
      const long share = gradients / threads + (t < gradients % threads ? 1 : 0);
      workers.emplace_back([&, t, share] {
        const int mine = count / threads;
        start.arrive_and_wait();
        for (long i = 0; i < share; ++i) {
          const auto k = static_cast<std::size_t>(t + threads * static_cast<int>(i % mine));
          std::vector<float>& x = params[k];
          const auto step = trainers[k]->gradient(x);
          const auto& g = step.result.gradient;
          for (std::size_t j = 0; j < x.size(); ++j) x[j] -= lr * g[j];
        }
      });
    }
    start.arrive_and_wait();
    const auto began = std::chrono::steady_clock::now();
    for (auto& w : workers) w.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    std::cout << "gradients=" << gradients << " threads=" << threads << " trainers=" << count
              << " seconds=" << seconds << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "gradient_throughput: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
