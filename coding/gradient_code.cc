#include "coding/gradient_code.h"

#include <stdexcept>
#include <string>

#include "coding/arrivals.h"

namespace fastk::coding {

GradientCode::GradientCode(Eigen::MatrixXd encoding, double tolerance)
    : encoding_(std::move(encoding)), tolerance_(tolerance) {
  if (encoding_.rows() == 0 || encoding_.cols() == 0) {
    throw std::invalid_argument("a gradient code needs at least one member and one partition");
  }
  if (!encoding_.allFinite()) {
    throw std::invalid_argument("gradient code encoding matrix has a non-finite entry");
  }
}

Decoding GradientCode::decode(std::span<const int> arrived) const {
  return decode_least_squares(arrived_rows(arrived), tolerance_);
}

std::vector<int> GradientCode::support(int member) const {
  check_member(member, members(), name());
  std::vector<int> held;
  for (int j = 0; j < partitions(); ++j) {
    if (encoding_(member, j) != 0.0) held.push_back(j);
  }
  return held;
}

int GradientCode::computation_load() const {
  return static_cast<int>((encoding_.array() != 0.0).rowwise().count().maxCoeff());
}

void GradientCode::check_arrived(std::span<const int> arrived) const {
  check_arrivals(arrived, members(), name());
}

Eigen::MatrixXd GradientCode::arrived_rows(std::span<const int> arrived) const {
  check_arrived(arrived);
  Eigen::MatrixXd rows(static_cast<Eigen::Index>(arrived.size()), encoding_.cols());
  for (std::size_t r = 0; r < arrived.size(); ++r) {
    rows.row(static_cast<Eigen::Index>(r)) = encoding_.row(arrived[r]);
  }
  return rows;
}

}  // namespace fastk::coding
