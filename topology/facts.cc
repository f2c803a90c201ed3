#include "topology/facts.h"

#include <cmath>
#include <string>

#include "topology/closed_forms.h"

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

// One from every peer of a small graph (exact); about kDiameterWork steps on a large one.
int diameter_searches(const Graph& g) {
  if (g.size() < 2000) return g.size() + 1;
  const double per_search =
      static_cast<double>(g.size()) + 2.0 * static_cast<double>(g.num_edges());
  return static_cast<int>(std::max(20.0, kDiameterWork / per_search));
}

// The spectrum of a static W: a closed form above the dense limit when the family has one
// (a large ring's gap is too small for the iterative solver), else spectrum().
Spectrum static_spectrum(const Topology& topology) {
  if (topology.graph.size() > kDenseSpectrumPeers) {
    if (const auto lambda = closed_form_lambda(topology)) {
      Spectrum s;
      s.eigenvalues = {{1.0, 0.0}, {*lambda, 0.0}};
      s.complete = false;
      s.method = "closed form";
      s.lambda = *lambda;
      return s;
    }
  }
  return spectrum(topology.weights);
}

// One period's product: dense (every eigenvalue) for small n, iterative above.
Spectrum period_spectrum(const std::vector<MixingMatrix>& rounds, int peers) {
  if (peers > kMaxPeersForRoundSpectra) return product_spectrum(rounds);
  Eigen::MatrixXd product = Eigen::MatrixXd::Identity(peers, peers);
  for (const MixingMatrix& w : rounds) product = dense(w) * product;
  return dense_spectrum(product);
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
  const std::optional<int> known = closed_form_diameter(topology);
  const DiameterBounds diameter =
      known ? DiameterBounds{*known, *known} : g.diameter_bounds(diameter_searches(g));
  f.diameter = diameter.lower;
  f.diameter_upper = diameter.upper;
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
    f.spectrum = static_spectrum(topology);
    f.lambda_per_round = f.spectrum.lambda;
  } else {
    std::vector<MixingMatrix> rounds;
    for (int k = 0; k < f.period; ++k) {
      rounds.push_back(topology.schedule->matrix(k));
      merge_round(f.mixing, check_mixing(rounds.back(), g, tolerance), k);
      if (f.peers <= kMaxPeersForRoundSpectra) {
        f.round_lambdas.push_back(spectrum(rounds.back()).lambda);
      }
    }
    f.spectrum = period_spectrum(rounds, f.peers);
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
