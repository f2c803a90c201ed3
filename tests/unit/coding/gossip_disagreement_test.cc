// Why gossip wants cancellation-free codes (docs/coding.md §7.2; property 21): members
// of a neighbourhood evaluate their partitions at different parameters, and a decoder that
// cancels terms amplifies the disagreement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "coding/cyclic_repetition_code.h"
#include "coding/fractional_repetition_code.h"
#include "coding/portable_normal.h"
#include "coding/subsets.h"

namespace fastk::coding {
namespace {

// Quadratic losses L_j(x) = |x - c_j|^2 / 2, so g_j(x) = x - c_j. Member i evaluates every
// partition it holds at x_i = x_bar + epsilon * noise_i. Returns the worst relative error,
// over all (n - s)-subsets, of the decoded sum against sum_j g_j(x_bar).
double worst_disagreement_error(const GradientCode& code, double epsilon) {
  const int n = code.members(), dim = 50;
  PortableNormal normal(2017);
  const auto normal_vector = [&] {
    Eigen::VectorXd v(dim);
    for (int t = 0; t < dim; ++t) v(t) = normal();
    return v;
  };
  const Eigen::VectorXd x_bar = normal_vector();
  std::vector<Eigen::VectorXd> optimum(n), x(n);
  for (int j = 0; j < n; ++j) optimum[j] = normal_vector();
  for (int i = 0; i < n; ++i) x[i] = x_bar + epsilon * normal_vector();

  Eigen::VectorXd truth = Eigen::VectorXd::Zero(dim);
  for (int j = 0; j < n; ++j) truth += x_bar - optimum[j];
  double worst = 0;
  for_each_subset(n, n - code.stragglers_tolerated(), [&](std::span<const int> s) {
    const Decoding d = code.decode(s);
    Eigen::VectorXd decoded = Eigen::VectorXd::Zero(dim);
    for (std::size_t r = 0; r < s.size(); ++r) {
      const int i = s[r];
      for (int j : code.support(i)) {
        decoded += d.coefficients[r] * code.encoding()(i, j) * (x[i] - optimum[j]);
      }
    }
    worst = std::max(worst, (decoded - truth).norm() / truth.norm());
  });
  return worst;
}

TEST(CodingGossipDisagreementTest, CyclicCodeAmplifiesDisagreementAndRepetitionDoesNot) {
  const FractionalRepetitionCode frc(6, 2);
  EXPECT_LT(worst_disagreement_error(frc, 0.0), 1e-12);
  const double frc_error = worst_disagreement_error(frc, 1e-2);
  // FRC's error stays of the order of the disagreement itself (docs/coding.md §7.2: 0.0073).
  EXPECT_LT(frc_error, 1e-2);
  // Random cyclic codes (one seed each, as drawn): exact when everyone agrees, amplified by
  // their cancelling coefficients otherwise (docs/coding.md §7.2: median 0.10, worst 0.53).
  std::vector<double> crc_errors;
  for (std::uint64_t seed = 1; seed <= 21; ++seed) {
    const CyclicRepetitionCode crc(6, 2, seed, 1);
    EXPECT_LT(worst_disagreement_error(crc, 0.0), 1e-9) << "seed " << seed;
    crc_errors.push_back(worst_disagreement_error(crc, 1e-2));
  }
  std::sort(crc_errors.begin(), crc_errors.end());
  const double median = crc_errors[crc_errors.size() / 2];
  std::printf("worst relative error at epsilon = 1e-2: FRC %.4f, random CRC median %.4f max %.4f\n",
              frc_error, median, crc_errors.back());
  EXPECT_GT(median, 10 * frc_error);
}

TEST(CodingGossipDisagreementTest, AmplificationIsOneForRepetitionAndLargeForCyclic) {
  const FractionalRepetitionCode frc(6, 2);
  const CyclicRepetitionCode crc(6, 2);
  double crc_worst = 0;
  for_each_subset(6, 4, [&](std::span<const int> s) {
    EXPECT_DOUBLE_EQ(frc.decode(s).amplification, 1.0);
    crc_worst = std::max(crc_worst, crc.decode(s).amplification);
  });
  EXPECT_GT(crc_worst, 2.0);
}

}  // namespace
}  // namespace fastk::coding
