#include "consensus/disagreement.h"

#include <cmath>

#include "third_party/eigen.h"

namespace fastk::consensus {

double neighbourhood_disagreement(std::span<const float> own,
                                  const std::vector<std::span<const float>>& models) {
  if (models.empty()) return 0;
  using Vector = Eigen::Map<const Eigen::ArrayXf>;
  const auto n = static_cast<Eigen::Index>(own.size());
  const Vector x(own.data(), n);
  const float q = static_cast<float>(models.size() + 1);
  // own - z = ((q - 1) own - sum_j x_j) / q; the sum over j is formed in chunks of models
  // that Eigen fuses into one pass.
  double squared = 0;
  constexpr Eigen::Index kChunk = 4096;  // floats per block: the models' block stays in L1
  for (Eigen::Index first = 0; first < n; first += kChunk) {
    const Eigen::Index size = std::min(kChunk, n - first);
    // At most kChunk values, kept on the stack: no allocation per call.
    Eigen::Array<float, Eigen::Dynamic, 1, 0, kChunk, 1> gap = (q - 1) * x.segment(first, size);
    for (const auto& m : models) gap -= Vector(m.data() + first, size);
    squared += static_cast<double>((gap / q).square().sum());
  }
  return static_cast<double>(q) / (static_cast<double>(q) - 1) * squared;
}

double distance_between(std::span<const float> a, std::span<const float> b) {
  double sum[4] = {0, 0, 0, 0};
  std::size_t p = 0;
  for (; p + 4 <= a.size(); p += 4) {
    for (std::size_t l = 0; l < 4; ++l) {
      const double d = static_cast<double>(a[p + l]) - static_cast<double>(b[p + l]);
      sum[l] += d * d;
    }
  }
  for (; p < a.size(); ++p) {
    const double d = static_cast<double>(a[p]) - static_cast<double>(b[p]);
    sum[0] += d * d;
  }
  return std::sqrt((sum[0] + sum[1]) + (sum[2] + sum[3]));
}

}  // namespace fastk::consensus
