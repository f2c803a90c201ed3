// Spectral facts of a mixing matrix: how fast gossip averaging contracts disagreement.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "third_party/eigen.h"
#include "topology/mixing.h"

namespace fastk::topology {

// Up to this many peers a spectrum is exact (a dense eigensolve, O(n^3): 9 s at 2,048 peers
// on our 2-core machine); above it, iterative (Lanczos or Arnoldi through Spectra, on the
// sparse W: O(entries) per step), which agrees with the dense result to 1e-9 where both run
// (tests/unit/topology/spectral_test.cc).
inline constexpr int kDenseSpectrumPeers = 2048;

struct Spectrum {
  // Sorted by decreasing modulus (ties: larger real part first). Real for symmetric (and
  // reversible) matrices; possibly complex otherwise. Exact: all n. Iterative: the largest
  // few (`complete` false).
  std::vector<std::complex<double>> eigenvalues;
  bool real = true;
  bool complete = true;
  // How it was computed: "dense", "lanczos" (symmetric or reversible W), "arnoldi" (any
  // other), "closed form" (closed_forms.h).
  std::string method = "dense";
  // Second-largest eigenvalue modulus: per-round contraction factor of disagreement for a
  // doubly stochastic W. 1 means no contraction (disconnected or periodic).
  double lambda = 1.0;
  double spectral_gap() const { return 1.0 - lambda; }
};

// Exact for n <= dense_up_to, iterative above. Throws std::runtime_error when the iterative
// method does not converge (a gap too small to resolve: a ring of many thousand peers has
// lambda within 1e-8 of 1; closed_forms.h answers for the families it knows).
Spectrum spectrum(const MixingMatrix& w, int dense_up_to = kDenseSpectrumPeers);
// Dense eigen-decomposition: O(n^3), every eigenvalue.
Spectrum dense_spectrum(const Eigen::MatrixXd& w);
// The spectrum of rounds.back() * ... * rounds.front() (one period of a time-varying
// schedule), iteratively, without forming the product (which is dense).
Spectrum product_spectrum(const std::vector<MixingMatrix>& rounds);

// Gossip rounds needed to shrink disagreement by a factor `eps` (0 < eps < 1):
// ceil(log(1/eps) / log(1/lambda)); 1 when lambda is 0; nullopt when lambda >= 1 (never).
std::optional<std::int64_t> gossip_rounds(double lambda, double eps);

}  // namespace fastk::topology
