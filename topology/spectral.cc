#include "topology/spectral.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "topology/iterative_spectrum.h"

namespace fastk::topology {

void sort_by_modulus(Spectrum& s) {
  std::sort(s.eigenvalues.begin(), s.eigenvalues.end(), [](auto a, auto b) {
    constexpr double kTie = 1e-12;
    if (std::abs(std::abs(a) - std::abs(b)) > kTie) return std::abs(a) > std::abs(b);
    return a.real() > b.real();
  });
  s.real = std::all_of(s.eigenvalues.begin(), s.eigenvalues.end(),
                       [](auto v) { return std::abs(v.imag()) < 1e-12; });
  s.lambda = s.eigenvalues.size() > 1 ? std::abs(s.eigenvalues[1]) : 0.0;
  // Round-off can push a zero-gap spectrum a hair below 0 or a unit modulus above 1.
  s.lambda = std::clamp(s.lambda, 0.0, 1.0);
  if (s.lambda < 1e-12) s.lambda = 0.0;
}

Spectrum dense_spectrum(const Eigen::MatrixXd& w) {
  Spectrum s;
  if (w.rows() != w.cols() || w.rows() == 0) {
    throw std::invalid_argument("spectrum needs a non-empty square matrix");
  }
  if (w.isApprox(w.transpose(), 1e-12)) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(w, Eigen::EigenvaluesOnly);
    for (double v : solver.eigenvalues()) s.eigenvalues.emplace_back(v, 0.0);
  } else {
    Eigen::EigenSolver<Eigen::MatrixXd> solver(w, false);
    for (const auto& v : solver.eigenvalues()) s.eigenvalues.push_back(v);
  }
  sort_by_modulus(s);
  return s;
}

Spectrum spectrum(const MixingMatrix& w, int dense_up_to) {
  if (w.rows() != w.cols() || w.rows() == 0) {
    throw std::invalid_argument("spectrum needs a non-empty square matrix");
  }
  if (w.rows() <= dense_up_to) return dense_spectrum(dense(w));
  Spectrum s = iterative_spectrum(w);
  sort_by_modulus(s);
  return s;
}

Spectrum product_spectrum(const std::vector<MixingMatrix>& rounds) {
  Spectrum s = iterative_product_spectrum(rounds);
  sort_by_modulus(s);
  return s;
}

std::optional<std::int64_t> gossip_rounds(double lambda, double eps) {
  if (!(eps > 0.0 && eps < 1.0)) throw std::invalid_argument("eps must lie in (0, 1)");
  if (lambda <= 0.0) return 1;
  if (lambda >= 1.0 - 1e-15) return std::nullopt;
  return static_cast<std::int64_t>(std::ceil(std::log(1.0 / eps) / std::log(1.0 / lambda)));
}

}  // namespace fastk::topology
