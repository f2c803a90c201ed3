// Compiled by tests/lint/check_warning_scope.sh, never linked: Eigen code that GCC 12 with
// AVX-512 inlines into false -Wmaybe-uninitialized warnings from its intrinsic headers, next
// to a real maybe-uninitialized read in our own code, which must still be reported.
#ifdef FASTK_PROBE_DIRECT_EIGEN
#include <Eigen/Dense>
#else
#include "third_party/eigen.h"
#endif

void fastk_probe_sink(double);

double fastk_probe(const Eigen::MatrixXd& m, const Eigen::VectorXd& v, int flag) {
  double maybe_set;
  if (flag > 0) maybe_set = v.sum();
  const Eigen::VectorXd product = m.transpose() * v;
  if (flag < 5) fastk_probe_sink(maybe_set);  // read although flag may be <= 0
  return product.sum();
}
