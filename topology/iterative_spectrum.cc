#include "topology/iterative_spectrum.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "third_party/spectra.h"

namespace fastk::topology {
namespace {

using Eigen::Index;
using Eigen::VectorXd;

// Relative residual |W x - theta x| <= tol |theta| Spectra stops at. For a symmetric (or
// reversible) W that bounds the error of theta by 1e-6 |theta|; the value converges long
// before the residual does (a random regular graph's top eigenvalues cluster within 1e-4,
// which slows the residual, not theta): at 100,000 peers theta agreed with a 1e-9 run to
// 1e-15, and the tests find 1e-9 agreement with the dense solver on every graph they compare.
// A tighter tolerance took 2-3x the time for the same digits.
constexpr double kTolerance = 1e-6;
// Arnoldi (a non-symmetric W) has no such bound: a residual of 1e-6 left lambda 1.4e-8 off
// on a directed graph of 400 peers; 1e-11 agrees to 1e-9.
constexpr double kNonSymmetricTolerance = 1e-11;
constexpr Index kMaxRestarts = 3000;
// Eigenvalues asked for besides the top one: lambda and the next (more converge slowly: a
// random regular graph's cluster within 1e-4 of each other).
constexpr Index kWanted = 2;
// Arnoldi's eigenvalues come in complex pairs and many share a modulus (the one-peer period
// product): asked for 2, it settled on a pair 3e-4 below lambda at 500 peers; asked for 6
// (40 vectors), it agrees with the dense solver to 1e-9.
constexpr Index kWantedNonSymmetric = 6;

// pi with pi_i W_ij = pi_j W_ji for every entry, when W is row-stochastic and reversible (a
// symmetric W: pi = 1; uniform weights 1 / (1 + d_i): pi_i = 1 + d_i). Then D^1/2 W D^-1/2 is
// symmetric with W's eigenvalues, and Lanczos applies. Found by a walk over W's support from
// each unvisited peer, then checked on every entry.
std::optional<VectorXd> reversing_measure(const MixingMatrix& w) {
  const Index n = w.rows();
  for (Index i = 0; i < n; ++i) {
    if (std::abs(w.row(i).sum() - 1.0) > 1e-9) return std::nullopt;
  }
  VectorXd pi = VectorXd::Zero(n);
  std::vector<Index> stack;
  for (Index root = 0; root < n; ++root) {
    if (pi[root] > 0) continue;
    pi[root] = 1;
    stack.push_back(root);
    while (!stack.empty()) {
      const Index i = stack.back();
      stack.pop_back();
      for (MixingMatrix::InnerIterator it(w, i); it; ++it) {
        const Index j = it.col();
        if (j == i || it.value() == 0) continue;
        const double back = w.coeff(j, i);
        if (it.value() < 0 || back <= 0) return std::nullopt;
        if (pi[j] == 0) {
          pi[j] = pi[i] * it.value() / back;
          stack.push_back(j);
        }
      }
    }
  }
  for (Index i = 0; i < n; ++i) {
    for (MixingMatrix::InnerIterator it(w, i); it; ++it) {
      const double there = pi[i] * it.value(), back = pi[it.col()] * w.coeff(it.col(), i);
      if (std::abs(there - back) > 1e-12 * std::max({std::abs(there), std::abs(back), 1e-300})) {
        return std::nullopt;
      }
    }
  }
  return pi;
}

// x -> (D^1/2 W D^-1/2 - v v^T) x, v = D^1/2 1 normalised: the symmetric form of W without
// its eigenvalue 1. Spectra's operator interface.
class DeflatedReversible {
 public:
  using Scalar = double;
  DeflatedReversible(const MixingMatrix& w, const VectorXd& pi)
      : w_(w),
        root_(pi.cwiseSqrt()),
        inverse_root_(root_.cwiseInverse()),
        top_(root_.normalized()) {}
  Index rows() const { return w_.rows(); }
  Index cols() const { return w_.cols(); }
  void perform_op(const double* in, double* out) const {
    Eigen::Map<const VectorXd> x(in, rows());
    Eigen::Map<VectorXd> y(out, rows());
    y = root_.cwiseProduct(w_ * inverse_root_.cwiseProduct(x));
    y -= top_ * top_.dot(x);
  }

 private:
  const MixingMatrix& w_;
  VectorXd root_, inverse_root_, top_;
};

// x -> W_last ... W_first x, minus the mean of x when every W is doubly stochastic (the
// product's eigenvalue 1 has the all-ones vector on both sides then).
class RoundProduct {
 public:
  using Scalar = double;
  RoundProduct(const std::vector<MixingMatrix>& rounds, bool deflate)
      : rounds_(rounds), deflate_(deflate) {}
  Index rows() const { return rounds_.front().rows(); }
  Index cols() const { return rows(); }
  void perform_op(const double* in, double* out) const {
    Eigen::Map<const VectorXd> x(in, rows());
    Eigen::Map<VectorXd> y(out, rows());
    VectorXd v = x;
    for (const MixingMatrix& w : rounds_) v = w * v;
    y = v;
    if (deflate_) y.array() -= x.mean();
  }

 private:
  const std::vector<MixingMatrix>& rounds_;
  bool deflate_;
};

bool doubly_stochastic(const MixingMatrix& w) {
  const VectorXd ones = VectorXd::Ones(w.cols());
  const VectorXd rows = w * ones;
  const VectorXd cols = w.transpose() * ones;
  return (rows.array() - 1).abs().maxCoeff() <= 1e-9 && (cols.array() - 1).abs().maxCoeff() <= 1e-9;
}

// Whether an operator is zero (exact averaging once 1 is projected out): its image of a
// pseudo-random vector vanishes, which a non-zero operator gives with probability 0.
template <typename Op>
bool vanishes(const Op& op) {
  VectorXd x(op.rows());
  for (Index i = 0; i < x.size(); ++i) x[i] = std::sin(1.0 + 0.7 * static_cast<double>(i * i));
  VectorXd y(op.rows());
  op.perform_op(x.data(), y.data());
  return y.norm() <= 1e-13 * x.norm();
}

void converged_or_throw(Spectra::CompInfo info, const char* method, Index n) {
  if (info == Spectra::CompInfo::Successful) return;
  throw std::runtime_error(std::string(method) + " did not converge on the " + std::to_string(n) +
                           "-peer mixing matrix in " + std::to_string(kMaxRestarts) +
                           " restarts: its spectral gap is too small to resolve iteratively");
}

Spectrum with_top(const char* method) {
  Spectrum s;
  s.eigenvalues.emplace_back(1.0, 0.0);
  s.complete = false;
  s.method = method;
  return s;
}

// The largest eigenvalues of `op` by modulus, to a relative residual `tolerance`.
std::vector<double> lanczos_values(DeflatedReversible& op, double tolerance) {
  const Index n = op.rows();
  const Index nev = std::min<Index>(kWanted, n - 1);
  Spectra::SymEigsSolver<DeflatedReversible> solver(op, nev, std::min<Index>(n, 4 * nev + 8));
  solver.init();
  solver.compute(Spectra::SortRule::LargestMagn, kMaxRestarts, tolerance);
  converged_or_throw(solver.info(), "Lanczos", n);
  const Eigen::VectorXd values = solver.eigenvalues();
  return {values.begin(), values.end()};
}

Spectrum lanczos(const MixingMatrix& w, const VectorXd& pi) {
  Spectrum s = with_top("lanczos");
  DeflatedReversible op(w, pi);
  if (vanishes(op)) {
    s.eigenvalues.emplace_back(0.0, 0.0);
    return s;
  }
  std::vector<double> values = lanczos_values(op, kTolerance);
  // A gap below 1e3 tolerances (a long path or ring-like edge list, which has no closed
  // form) would be known to a few per cent only: solve again to a thousandth of the gap.
  double largest = 0;
  for (double v : values) largest = std::max(largest, std::abs(v));
  const double gap = 1.0 - largest;
  if (gap < 1e3 * kTolerance) values = lanczos_values(op, std::max(1e-14, 1e-3 * gap));
  for (double v : values) s.eigenvalues.emplace_back(v, 0.0);
  return s;
}

Spectrum arnoldi(const std::vector<MixingMatrix>& rounds) {
  const Index n = rounds.front().rows();
  const bool deflate = std::all_of(rounds.begin(), rounds.end(), doubly_stochastic);
  Spectrum s = with_top("arnoldi");
  if (!deflate) s.eigenvalues.clear();  // the solver finds the top one too
  RoundProduct op(rounds, deflate);
  if (deflate && vanishes(op)) {
    s.eigenvalues.emplace_back(0.0, 0.0);
    return s;
  }
  const Index nev = std::min<Index>(kWantedNonSymmetric, n - 2);
  Spectra::GenEigsSolver<RoundProduct> solver(op, nev, std::min<Index>(n, 40));
  solver.init();
  solver.compute(Spectra::SortRule::LargestMagn, kMaxRestarts, kNonSymmetricTolerance);
  converged_or_throw(solver.info(), "Arnoldi", n);
  for (const auto& v : solver.eigenvalues()) s.eigenvalues.push_back(v);
  return s;
}

}  // namespace

Spectrum iterative_spectrum(const MixingMatrix& w) {
  if (w.rows() < 4) throw std::invalid_argument("an iterative spectrum needs at least 4 peers");
  if (const auto pi = reversing_measure(w)) return lanczos(w, *pi);
  return arnoldi({w});
}

Spectrum iterative_product_spectrum(const std::vector<MixingMatrix>& rounds) {
  if (rounds.empty() || rounds.front().rows() < 4) {
    throw std::invalid_argument("an iterative spectrum needs a round and at least 4 peers");
  }
  return arnoldi(rounds);
}

}  // namespace fastk::topology
