// TorchScript models against libtorch alone and against the hand-written models, one thread,
// batch 32 (issue 33's figures; docs/benchmarks.md §13):
//   Raw/NAME      libtorch alone: the module's forward, cross-entropy and backward, nothing else
//   Backend/NAME  the same through fastk's backend (Model::loss_and_gradient on a flat vector:
//                 binding, the gradient's copy-out, the L2-free loss)
//   Hand/NAME     fastk's hand-written model of the same architecture
// The modules are written by experiments/models/export_torchscript.py with Debian's
// python3-torch at start-up. Run from the source tree, interleaved, e.g.
//   build/benchmarks/torchscript_benchmark --benchmark_repetitions=9
//   --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/script.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "benchmarks/gradient_loop.h"
#include "learning/model.h"

namespace fastk::learning {
namespace {

using bench::kBatch;

std::string exported(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "fastk-torchscript-benchmark";
  std::filesystem::create_directories(dir);
  const auto file = dir / (name + ".pt");
  const std::string command = "/usr/bin/python3 experiments/models/export_torchscript.py " + name +
                              " " + file.string() + " > /dev/null";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("could not export " + name + " (run from the source tree)");
  }
  return file.string();
}

void raw_libtorch(benchmark::State& state, const std::string& file, SampleShape shape) {
  torch::jit::Module module = torch::jit::load(file);
  module.train();
  const at::Tensor x = torch::rand({kBatch, shape.channels, shape.height, shape.width});
  const at::Tensor y = torch::randint(10, {kBatch}, torch::kInt64);
  std::vector<at::Tensor> parameters;
  for (const auto& p : module.parameters()) parameters.push_back(p);
  for (auto _ : state) {
    at::Tensor loss = at::cross_entropy_loss(module.forward({x}).toTensor(), y);
    loss.backward();
    for (auto& p : parameters) p.mutable_grad().reset();  // as an optimizer's zero_grad(True)
    benchmark::DoNotOptimize(loss.item<float>());
  }
  bench::set_rates(state, 0);
}

struct Architecture {
  std::string name;
  SampleShape shape;
  std::optional<ModelSpec> hand;  // fastk's hand-written model of it, if any
};

}  // namespace
}  // namespace fastk::learning

int main(int argc, char** argv) {
  using namespace fastk::learning;
  at::set_num_threads(1);
  const std::vector<Architecture> architectures = {
      {"mlp", {1, 28, 28}, ModelSpec{.kind = ModelKind::kMlp, .hidden = {128}}},
      {"lenet5", {1, 28, 28}, ModelSpec{.kind = ModelKind::kLenet}},
      {"cifar_cnn", {3, 32, 32}, ModelSpec{.kind = ModelKind::kCifarCnn}},
      {"resnet20", {3, 32, 32}, std::nullopt},
  };
  for (const auto& a : architectures) {
    const std::string file = exported(a.name);
    ModelSpec spec;
    spec.kind = ModelKind::kTorchScript;
    spec.file = file;
    benchmark::RegisterBenchmark(("Raw/" + a.name).c_str(), raw_libtorch, file, a.shape);
    benchmark::RegisterBenchmark(("Backend/" + a.name).c_str(),
                                 fastk::bench::time_loss_and_gradient, spec, a.shape, false);
    if (a.hand) {
      benchmark::RegisterBenchmark(("Hand/" + a.name).c_str(), fastk::bench::time_loss_and_gradient,
                                   *a.hand, a.shape, false);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
