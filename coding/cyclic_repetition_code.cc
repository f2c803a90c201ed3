#include "coding/cyclic_repetition_code.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "coding/portable_normal.h"
#include "coding/subsets.h"

namespace fastk::coding {
namespace {

constexpr std::uint64_t kMaxSubsetsChecked = 2000;

// One random construction, exactly as in the reference getB: H = [H~, -H~ 1] and each row
// solves H[:, W_i \ {i}] x = -H[:, i] with B[i, i] = 1.
CyclicRepetitionCode::Draw draw_code(int n, int s, std::uint64_t seed) {
  CyclicRepetitionCode::Draw draw;
  draw.seed = seed;
  const Eigen::MatrixXd h_tilde = gaussian_matrix(s, n - 1, seed);
  draw.parity.resize(s, n);
  draw.parity.leftCols(n - 1) = h_tilde;
  draw.parity.col(n - 1) = -h_tilde.rowwise().sum();

  draw.encoding = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    draw.encoding(i, i) = 1.0;
    if (s == 0) continue;
    Eigen::MatrixXd others(s, s);
    for (int t = 0; t < s; ++t) others.col(t) = draw.parity.col((i + 1 + t) % n);
    const Eigen::VectorXd x = others.fullPivLu().solve(-draw.parity.col(i));
    for (int t = 0; t < s; ++t) draw.encoding(i, (i + 1 + t) % n) = x(t);
  }
  const bool valid =
      draw.encoding.allFinite() &&
      (s == 0 || (draw.parity * draw.encoding.transpose()).cwiseAbs().maxCoeff() < 1e-8);
  draw.worst_condition =
      valid ? worst_row_subset_condition(draw.encoding, n - s, kMaxSubsetsChecked, seed)
            : std::numeric_limits<double>::infinity();
  return draw;
}

CyclicRepetitionCode::Draw best_draw(int n, int s, std::uint64_t seed, int candidates) {
  if (n < 1 || s < 0 || s >= n) {
    throw std::invalid_argument("cyclic repetition code needs n >= 1 and 0 <= s < n, got n=" +
                                std::to_string(n) + " s=" + std::to_string(s));
  }
  if (candidates < 1) {
    throw std::invalid_argument("cyclic repetition code needs at least one candidate seed, got " +
                                std::to_string(candidates));
  }
  CyclicRepetitionCode::Draw best = draw_code(n, s, seed);
  for (int c = 1; c < candidates; ++c) {
    CyclicRepetitionCode::Draw next = draw_code(n, s, seed + static_cast<std::uint64_t>(c));
    // Compared to three digits (subsets.h), so that every build picks the same seed.
    if (three_significant_digits(next.worst_condition) <
        three_significant_digits(best.worst_condition)) {
      best = std::move(next);
    }
  }
  if (!std::isfinite(best.worst_condition)) {
    throw std::invalid_argument("cyclic repetition code n=" + std::to_string(n) +
                                " s=" + std::to_string(s) + ": no candidate seed gave a code " +
                                "whose every (n-s)-subset is invertible; try more candidates");
  }
  return best;
}

}  // namespace

CyclicRepetitionCode::CyclicRepetitionCode(int n, int s, std::uint64_t seed, int candidates)
    : CyclicRepetitionCode(best_draw(n, s, seed, candidates), s) {}

CyclicRepetitionCode::CyclicRepetitionCode(Draw draw, int s)
    : GradientCode(std::move(draw.encoding)),
      s_(s),
      parity_(std::move(draw.parity)),
      chosen_seed_(draw.seed),
      worst_condition_(draw.worst_condition) {}

std::string CyclicRepetitionCode::name() const {
  return "crc(n=" + std::to_string(members()) + ",s=" + std::to_string(s_) +
         ",seed=" + std::to_string(chosen_seed_) + ")";
}

}  // namespace fastk::coding
