// The timed loop of a model's loss + gradient at batch 32 on random images, shared by the
// benchmarks of hand-written and TorchScript models, so that both are timed the same way.
#pragma once

#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "benchmarks/random_images.h"
#include "learning/model.h"

namespace fastk::bench {

constexpr int kBatch = 32;

// Sets samples/s, and FLOP/s when the model knows its FLOPs per sample.
inline void set_rates(benchmark::State& state, double flops_per_iteration) {
  state.counters["samples/s"] =
      benchmark::Counter(double(kBatch), benchmark::Counter::kIsIterationInvariantRate);
  if (flops_per_iteration <= 0) return;
  state.counters["FLOP/s"] =
      benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

// With `estimate`, the same call also computes the gradient-noise estimates (S and G of
// learning/gradient_noise.h): its time against the plain call's is the estimate's overhead.
inline void time_loss_and_gradient(benchmark::State& state, const learning::ModelSpec& spec,
                                   learning::SampleShape shape, bool estimate = false) {
  using namespace learning;
  const Dataset data = random_images(shape, 4 * kBatch);
  auto model = make_model(spec, data);
  std::vector<float> params(model->num_parameters()), grad(params.size());
  model->initialize(params, 1);
  std::vector<std::int64_t> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0);
  std::int64_t batch = 0;
  GradientNoise noise;
  GradientNoise* const wanted = estimate ? &noise : nullptr;
  for (auto _ : state) {
    BatchView view{&data, std::span(rows).subspan(std::size_t(batch % 4) * kBatch, kBatch)};
    benchmark::DoNotOptimize(model->loss_and_gradient(params, view, grad, wanted));
    benchmark::DoNotOptimize(noise);
    benchmark::ClobberMemory();
    ++batch;
  }
  set_rates(state, model->flops_per_sample() * kBatch);
}

}  // namespace fastk::bench
