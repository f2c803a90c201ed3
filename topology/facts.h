// Everything `fastk topo` reports about a topology, computed in one place so the text and
// JSON reports (node/) and the tests see the same numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "topology/mixing.h"
#include "topology/spectral.h"
#include "topology/topology.h"

namespace fastk::topology {

// Each round's W of a time-varying schedule is non-symmetric: its spectrum is a general
// O(n^3) eigensolve per round, seconds each at a thousand peers, so above this it is skipped
// (most are 1 anyway: one round leaves disagreement untouched somewhere), and the period's
// product is solved iteratively instead of densely.
inline constexpr int kMaxPeersForRoundSpectra = 512;
// Steps (peers plus edge ends visited) the diameter's breadth-first searches may take on a
// graph of 2,000 peers or more: a second or two here, 200 searches at 100,000 peers of
// degree 4.
inline constexpr double kDiameterWork = 1e8;

struct TopologyFacts {
  int peers = 0;
  std::int64_t edges = 0;
  int min_degree = 0;
  int max_degree = 0;
  double mean_degree = 0;
  bool regular = false;
  // Known for the regular families (closed_forms.h); else bounds from searches within
  // kDiameterWork (Graph::diameter_bounds), equal, so exact, on every graph of fewer than
  // 2,000 peers and on many larger ones.
  int diameter = 0;
  int diameter_upper = 0;
  // Of the static W; time-varying: of every round's W(k), each problem prefixed "round k: ".
  MixingCheck mixing;
  // Static: the spectrum of W. Time-varying: of the product of one period's matrices, with
  // lambda_per_round = lambda^(1/period) so the two kinds compare.
  Spectrum spectrum;
  int period = 1;
  std::int64_t arcs = 0;  // directed: a -> b, counted once each (edges counts them as pairs)
  double lambda_per_round = 1.0;
  // Time-varying: lambda of each round's W(k) alone (one-peer exponential: 1 for most
  // rounds, as a single round leaves some disagreement untouched; only the period contracts).
  // Empty above kMaxPeersForRoundSpectra peers.
  std::vector<double> round_lambdas;
  double eps = 1e-3;
  // Gossip rounds to shrink disagreement by eps (whole periods of a time-varying schedule);
  // none when lambda = 1.
  std::optional<std::int64_t> rounds_to_eps;
};

TopologyFacts analyze(const Topology& topology, double eps = 1e-3);

}  // namespace fastk::topology
