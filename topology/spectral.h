// Spectral facts of a mixing matrix: how fast gossip averaging contracts disagreement.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <vector>

#include "third_party/eigen.h"

namespace fastk::topology {

struct Spectrum {
  // Eigenvalues sorted by decreasing modulus (ties: larger real part first). Real for
  // symmetric matrices; possibly complex otherwise (e.g. uniform weights on irregular graphs).
  std::vector<std::complex<double>> eigenvalues;
  bool real = true;
  // Second-largest eigenvalue modulus: per-round contraction factor of disagreement for a
  // doubly stochastic W. 1 means no contraction (disconnected or periodic).
  double lambda = 1.0;
  double spectral_gap() const { return 1.0 - lambda; }
};

// Dense eigen-decomposition: O(n^3); fine for the few thousand peers a report deals with.
Spectrum spectrum(const Eigen::MatrixXd& w);

// Gossip rounds needed to shrink disagreement by a factor `eps` (0 < eps < 1):
// ceil(log(1/eps) / log(1/lambda)); 1 when lambda is 0; nullopt when lambda >= 1 (never).
std::optional<std::int64_t> gossip_rounds(double lambda, double eps);

}  // namespace fastk::topology
