// Eigen's sparse matrices, included the one way third_party/eigen.h includes the dense ones
// (the same GCC 12 warning kept inside Eigen; tests/lint/check_includes.sh keeps it so).
// Mixing matrices are sparse (degree-sized rows): a dense n x n W took 80 GB at 100,000 peers.
#pragma once

#include "third_party/eigen.h"

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ <= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Sparse>
#pragma GCC diagnostic pop
#else
#include <Eigen/Sparse>
#endif
