#include "node/calibration/fit.h"

#include <algorithm>
#include <functional>

#include "node/config/protocol_config.h"
#include "node/metrics/csv_writer.h"
#include "node/stragglers/delay_model.h"
#include "simulation/virtual_network.h"
#include "topology/topology.h"

namespace fastk::node::calibration {
namespace {

// Gradients that cost nothing to compute: timing does not depend on their values.
class ZeroGradients final : public simulation::GradientSource {
 public:
  void begin(consensus::PeerId, const consensus::StartGradient&) override {}
  consensus::GradientResult collect(consensus::PeerId, std::int64_t) override {
    return {std::vector<float>(1, 0.0f), {}};
  }
  std::vector<double> losses(consensus::PeerId, const consensus::StartValidation& v) override {
    return std::vector<double>(v.models.size(), 0.0);
  }
};

// The x in [0, high] at which increasing f(x) reaches `target` (0 when f(0) >= target).
double bisect(const std::function<double(double)>& f, double high, double target) {
  double low = 0;
  if (f(low) >= target) return 0;
  for (int step = 0; step < 40 && high - low > 1e-9; ++step) {
    const double mid = (low + high) / 2;
    (f(mid) < target ? low : high) = mid;
  }
  return (low + high) / 2;
}

}  // namespace

stragglers::DelaySpec reference_b_stragglers() {
  stragglers::DelaySpec spec;
  spec.slow_peers = {{0, 8.0}};
  return spec;
}

std::string reference_b_stragglers_toml() {
  std::string peers, factors;
  for (const auto& slow : reference_b_stragglers().slow_peers) {
    peers += (peers.empty() ? "" : ", ") + std::to_string(slow.peer);
    factors += (factors.empty() ? "" : ", ") + metrics::format_number(slow.factor);
  }
  return "{slow_peers = [" + peers + "], slow_factors = [" + factors + "]}";
}

double simulated_iteration_s(const Calibration& c, const ExperimentConfig& config,
                             std::int64_t iterations, const stragglers::DelaySpec& stragglers) {
  const topology::Topology topo = topology::build_topology(config.topology);
  const int n = topo.graph.size();
  // The config's protocol, as the reference run has it (`fastk run --set consensus.policy=full
  // --set coding={}`).
  consensus::ProtocolConfig protocol = protocol_config(
      config.consensus, config.run, config.optimizer, config.cluster, PeerRuntime::kSimulated);
  protocol.policy = consensus::PolicySpec{};
  protocol.coding = {};
  protocol.compression.reset();  // as the reference runs (calibrate_command.cc)
  protocol.error_reset.reset();
  protocol.iterations = iterations;
  std::vector<std::unique_ptr<consensus::PeerProtocol>> peers;
  for (int i = 0; i < n; ++i) {
    peers.push_back(std::make_unique<consensus::PeerProtocol>(
        i, topo.schedule, protocol, consensus::make_params(std::vector<float>(1, 0.0f))));
  }
  stragglers::DelaySpec spec = stragglers;
  spec.compute_s = c.gradient_s;
  stragglers::DelayModel delays(spec, n);
  ZeroGradients gradients;
  simulation::VirtualNetwork net(
      std::move(peers), delays, gradients,
      machine_costs(c, config.topology, config.cluster, consensus::PolicySpec{}, config.optimizer));
  double last_update_s = 0;
  net.on_record = [&](const consensus::IterationRecord& r) {
    last_update_s = std::max(last_update_s, r.update_s);
  };
  net.start(0.0);
  net.run();
  return last_update_s / static_cast<double>(iterations);
}

Calibration fit_costs(Calibration c, const ExperimentConfig& config, double one_way_s) {
  const std::int64_t iterations = c.reference_iterations;
  const auto set_message = [&](double message_s) {
    c.message_s = message_s;
    c.latency_s = std::max(0.0, one_way_s - 2 * message_s);
  };
  const auto simulate_a = [&] { return simulated_iteration_s(c, config, iterations, {}); };
  const auto simulate_b = [&] {
    return simulated_iteration_s(c, config, iterations, reference_b_stragglers());
  };
  set_message(bisect(
      [&](double x) {
        set_message(x);
        return simulate_a();
      },
      c.reference_iteration_s, c.reference_iteration_s));
  c.reference_simulated_s = simulate_a();
  c.reference_b_simulated_s = simulate_b();
  return c;
}

}  // namespace fastk::node::calibration
