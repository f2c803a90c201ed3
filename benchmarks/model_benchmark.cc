// Loss + gradient of every model at batch 32 on one core, in samples/s and achieved FLOP/s,
// next to a plain Eigen matrix product of the MLP 784-128-10 first layer's shape
// (128 x 784 times 784 x 32): the rate a gradient built on matrix products can hope for.
// The FLOP count of a model is that of its matrix products (forward, parameter gradients,
// and input gradients of every layer but the first); element-wise work is not counted.
// Each model's *_Noise variant also asks for the gradient-noise estimates; compare the two
// with interleaved repetitions, e.g. --benchmark_repetitions=9
// --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true.
#include <benchmark/benchmark.h>

#include <numeric>

#include "benchmarks/gradient_loop.h"
#include "learning/model.h"
#include "learning/random.h"
#include "third_party/eigen.h"

namespace fastk::learning {
namespace {

using bench::kBatch;
using bench::set_rates;

void loss_and_gradient(benchmark::State& state, ModelSpec spec, SampleShape shape,
                       bool estimate = false) {
  bench::time_loss_and_gradient(state, spec, shape, estimate);
}

void BM_MatrixProduct_128x784_784x32(benchmark::State& state) {
  Eigen::MatrixXf w = Eigen::MatrixXf::Random(128, 784);
  Eigen::MatrixXf x = Eigen::MatrixXf::Random(784, kBatch);
  Eigen::MatrixXf y(128, kBatch);
  for (auto _ : state) {
    y.noalias() = w * x;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_rates(state, 2.0 * 128 * 784 * kBatch);
}
BENCHMARK(BM_MatrixProduct_128x784_784x32);

void BM_LogisticRegression_784x10(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLogisticRegression}, {1, 28, 28});
}
BENCHMARK(BM_LogisticRegression_784x10);

void BM_LogisticRegression_784x10_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLogisticRegression}, {1, 28, 28}, true);
}
BENCHMARK(BM_LogisticRegression_784x10_Noise);

void BM_Mlp_784x128x10(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kMlp, .hidden = {128}}, {1, 28, 28});
}
BENCHMARK(BM_Mlp_784x128x10);

void BM_Mlp_784x128x10_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kMlp, .hidden = {128}}, {1, 28, 28}, true);
}
BENCHMARK(BM_Mlp_784x128x10_Noise);

void BM_Lenet_28x28x1(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLenet}, {1, 28, 28});
}
BENCHMARK(BM_Lenet_28x28x1);

void BM_Lenet_28x28x1_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kLenet}, {1, 28, 28}, true);
}
BENCHMARK(BM_Lenet_28x28x1_Noise);

void BM_CifarCnn_32x32x3(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kCifarCnn}, {3, 32, 32});
}
BENCHMARK(BM_CifarCnn_32x32x3);

void BM_CifarCnn_32x32x3_Noise(benchmark::State& state) {
  loss_and_gradient(state, {.kind = ModelKind::kCifarCnn}, {3, 32, 32}, true);
}
BENCHMARK(BM_CifarCnn_32x32x3_Noise);

}  // namespace
}  // namespace fastk::learning

BENCHMARK_MAIN();
