#include "node/calibration/fit.h"

#include <algorithm>
#include <map>

#include "consensus/virtual_network.h"
#include "node/stragglers/delay_model.h"
#include "topology/topology.h"

namespace fastk::node::calibration {
namespace {

// Gradients that cost nothing to compute: timing does not depend on their values.
class ZeroGradients final : public consensus::GradientSource {
 public:
  void begin(consensus::PeerId, const consensus::StartGradient&) override {}
  consensus::GradientResult collect(consensus::PeerId, std::int64_t) override {
    return {std::vector<float>(1, 0.0f), {}};
  }
};

}  // namespace

double simulated_iteration_s(const Calibration& c, const ExperimentConfig& config,
                             std::int64_t iterations) {
  const topology::Topology topo = topology::build_topology(config.topology);
  const int n = topo.graph.size();
  consensus::ProtocolConfig protocol;
  protocol.iterations = iterations;
  protocol.learning_rate = config.optimizer.lr;
  std::vector<std::unique_ptr<consensus::PeerProtocol>> peers;
  for (int i = 0; i < n; ++i) {
    peers.push_back(std::make_unique<consensus::PeerProtocol>(
        i, topo.schedule, protocol, consensus::make_params(std::vector<float>(1, 0.0f))));
  }
  stragglers::DelaySpec quiet;  // no stragglers, no added link delay
  quiet.compute_s = c.gradient_s;
  stragglers::DelayModel delays(quiet, n);
  ZeroGradients gradients;
  consensus::VirtualNetwork net(
      std::move(peers), delays, gradients,
      machine_costs(c, config.topology, config.cluster, consensus::PolicyKind::kFull));
  double last_update_s = 0;
  net.on_record = [&](const consensus::IterationRecord& r) {
    last_update_s = std::max(last_update_s, r.update_s);
  };
  net.start(0.0);
  net.run();
  return last_update_s / static_cast<double>(iterations);
}

Calibration fit_messages(Calibration c, const ExperimentConfig& config, std::int64_t iterations,
                         double measured_iteration_s, double one_way_s) {
  const auto simulate = [&](double message_s) {
    c.message_s = message_s;
    c.latency_s = std::max(0.0, one_way_s - 2 * message_s);
    return simulated_iteration_s(c, config, iterations);
  };
  // The simulated time grows with the message cost: bisect on [0, measured iteration].
  double low = 0, high = measured_iteration_s;
  if (simulate(low) >= measured_iteration_s) high = 0;
  for (int step = 0; step < 40 && high - low > 1e-9; ++step) {
    const double mid = (low + high) / 2;
    (simulate(mid) < measured_iteration_s ? low : high) = mid;
  }
  c.reference_simulated_s = simulate((low + high) / 2);
  return c;
}

}  // namespace fastk::node::calibration
