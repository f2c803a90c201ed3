// Standard normal draws that are the same for a seed on every standard library
// (std::normal_distribution is implementation-defined), so that every peer rebuilds the same
// random code from (construction, seed) instead of receiving the matrix.
#pragma once

#include <cstdint>
#include <random>

#include "third_party/eigen.h"

namespace fastk::coding {

class PortableNormal {
 public:
  explicit PortableNormal(std::uint64_t seed) : engine_(seed) {}
  double operator()();  // Box-Muller over 53-bit uniforms

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// rows x cols i.i.d. N(0, 1), filled row by row.
Eigen::MatrixXd gaussian_matrix(int rows, int cols, std::uint64_t seed);

}  // namespace fastk::coding
