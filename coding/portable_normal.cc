#include "coding/portable_normal.h"

#include <cmath>
#include <numbers>

namespace fastk::coding {

double PortableNormal::operator()() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // u1 in (0, 1] keeps the logarithm finite; u2 in [0, 1).
  const double u1 = double((engine_() >> 11) + 1) * 0x1.0p-53;
  const double u2 = double(engine_() >> 11) * 0x1.0p-53;
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

Eigen::MatrixXd gaussian_matrix(int rows, int cols, std::uint64_t seed) {
  PortableNormal normal(seed);
  Eigen::MatrixXd m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m(r, c) = normal();
  }
  return m;
}

}  // namespace fastk::coding
