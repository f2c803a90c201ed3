#include "topology/facts.h"

#include <cmath>
#include <string>

namespace fastk::topology {
namespace {

// A schedule's matrices satisfy a property when every round's does.
void merge_round(MixingCheck& all, const MixingCheck& round, int k) {
  all.row_stochastic = all.row_stochastic && round.row_stochastic;
  all.column_stochastic = all.column_stochastic && round.column_stochastic;
  all.symmetric = all.symmetric && round.symmetric;
  all.nonnegative = all.nonnegative && round.nonnegative;
  all.respects_graph = all.respects_graph && round.respects_graph;
  const std::string prefix = "round " + std::to_string(k) + ": ";
  for (const auto& e : round.errors) all.errors.push_back(prefix + e);
  for (const auto& w : round.warnings) all.warnings.push_back(prefix + w);
}

}  // namespace

TopologyFacts analyze(const Topology& topology, double eps) {
  const Graph& g = topology.graph;
  TopologyFacts f;
  f.peers = g.size();
  f.edges = g.num_edges();
  f.min_degree = g.min_degree();
  f.max_degree = g.max_degree();
  f.mean_degree = f.peers > 0 ? 2.0 * static_cast<double>(f.edges) / f.peers : 0.0;
  f.regular = f.min_degree == f.max_degree;
  f.diameter = g.diameter();
  // The tolerance build_topology accepted the matrix with (a weights file's is looser).
  const double tolerance =
      topology.spec.weights == WeightRule::kFile ? kWeightsFileTolerance : 1e-9;
  f.period = topology.schedule->period();
  if (topology.directed()) {
    for (PeerId i = 0; i < f.peers; ++i)
      f.arcs += static_cast<std::int64_t>(topology.schedule->round(i, 0).send_to.size());
  }
  f.eps = eps;
  if (f.period == 1) {
    f.mixing = check_mixing(topology.weights, g, tolerance,
                            topology.directed() ? Stochastic::kColumns : Stochastic::kRows);
    f.spectrum = spectrum(topology.weights);
    f.lambda_per_round = f.spectrum.lambda;
  } else {
    Eigen::MatrixXd product = Eigen::MatrixXd::Identity(f.peers, f.peers);
    for (int k = 0; k < f.period; ++k) {
      const Eigen::MatrixXd w = topology.schedule->matrix(k);
      merge_round(f.mixing, check_mixing(w, g, tolerance), k);
      if (f.peers <= kMaxPeersForRoundSpectra) f.round_lambdas.push_back(spectrum(w).lambda);
      product = w * product;
    }
    f.spectrum = spectrum(product);
    f.lambda_per_round = std::pow(f.spectrum.lambda, 1.0 / f.period);
  }
  // A schedule mixes fully only over whole periods: one-peer exponential reaches exact
  // consensus after its period (3 rounds for 8 peers), not after one round.
  if (const auto periods = gossip_rounds(f.spectrum.lambda, eps)) {
    f.rounds_to_eps = *periods * f.period;
  }
  return f;
}

}  // namespace fastk::topology
