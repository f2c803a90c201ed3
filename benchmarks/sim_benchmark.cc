// Simulator throughput: events per second of the protocol and event loop alone (a
// one-parameter model with free gradients), and peers x iterations per second of `fastk sim`
// with real logistic-regression gradients (784 features, 10 classes: MNIST's shape).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "node/sim/simulation.h"
#include "node/stragglers/delay_model.h"
#include "simulation/virtual_network.h"
#include "topology/topology.h"

namespace {

using namespace fastk;

class FreeGradients final : public simulation::GradientSource {
 public:
  void begin(int, const consensus::StartGradient&) override {}
  consensus::GradientResult collect(int, std::int64_t) override { return {{0.01f}, {}}; }
  std::vector<double> losses(int, const consensus::StartValidation& v) override {
    return std::vector<double>(v.models.size(), 0.0);
  }
};

void BM_ProtocolEvents(benchmark::State& state) {
  topology::TopologySpec spec;
  spec.kind = topology::TopologyKind::kRandomRegular;
  spec.peers = static_cast<int>(state.range(0));
  spec.degree = 4;
  const topology::Topology topo = topology::build_topology(spec);
  consensus::ProtocolConfig config;
  config.iterations = 200;
  config.policy.kind = static_cast<consensus::PolicyKind>(state.range(1));
  config.policy.backups = 1;
  node::stragglers::DelaySpec delay_spec;
  delay_spec.distribution = node::stragglers::ComputeDistribution::kShiftedExponential;
  delay_spec.transient_probability = 0.1;
  std::int64_t events = 0;
  for (auto _ : state) {
    node::stragglers::DelayModel delays(delay_spec, spec.peers);
    FreeGradients gradients;
    std::vector<std::unique_ptr<consensus::PeerProtocol>> peers;
    for (int i = 0; i < spec.peers; ++i) {
      peers.push_back(std::make_unique<consensus::PeerProtocol>(i, topo.schedule, config,
                                                                consensus::make_params({0.0f})));
    }
    simulation::VirtualNetwork net(std::move(peers), delays, gradients);
    net.start();
    net.run();
    events += net.events();
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ProtocolEvents)
    ->ArgNames({"peers", "policy"})
    ->Args({16, static_cast<int>(consensus::PolicyKind::kStatic)})
    ->Args({16, static_cast<int>(consensus::PolicyKind::kAdaptive)})
    ->Args({1000, static_cast<int>(consensus::PolicyKind::kStatic)})
    ->Unit(benchmark::kMillisecond);

void BM_SimulateLogisticRegression(benchmark::State& state) {
  node::sim::SimulationInputs in;
  in.run.iterations = 100;
  in.topology.kind = topology::TopologyKind::kTorus;
  in.topology.peers = 16;
  in.data.kind = learning::DatasetKind::kGaussianMixture;
  in.data.train_samples = 16 * 500;
  in.data.test_samples = 100;
  in.data.dim = 784;
  in.data.classes = 10;
  in.model.kind = learning::ModelKind::kLogisticRegression;
  in.optimizer.batch_size = 32;
  in.consensus.protocol.policy.kind = consensus::PolicyKind::kDeadline;
  in.stragglers.transient_probability = 0.1;
  in.sim.threads = static_cast<int>(state.range(0));
  in.run.eval_interval_s = 1e9;  // evaluate at the start and the end only
  in.sim.per_peer_eval = false;
  const auto folder = std::filesystem::temp_directory_path() / "fastk_sim_benchmark";
  std::int64_t updates = 0;
  for (auto _ : state) {
    updates += node::sim::simulate(in, folder).totals.iterations;
  }
  state.counters["peer_iterations/s"] =
      benchmark::Counter(static_cast<double>(updates), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulateLogisticRegression)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
