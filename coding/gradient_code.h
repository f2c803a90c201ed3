// One interface for every gradient code over n members and k data partitions (docs/coding.md
// §1): member i holds the partitions in supp(b_i) and sends f_i = sum_j B_ij g_j; the
// aggregator turns an arrival set into decoding coefficients.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "coding/decoding.h"
#include "third_party/eigen.h"

namespace fastk::coding {

class GradientCode {
 public:
  virtual ~GradientCode() = default;

  virtual std::string name() const = 0;
  // Exact tolerance s: any n - s arrivals decode exactly. 0 for approximate codes, which never
  // promise exactness.
  virtual int stragglers_tolerated() const = 0;
  // Approximate codes never promise decodable == true, even when everyone arrived (their
  // fixed weights are unbiased only on average): the aggregator steps at its deadline.
  virtual bool approximate() const { return false; }
  // Decodes the members that arrived, in arrival order (order matters for first-responder
  // decoders). Coefficients come back in the same order. The default is the least-squares
  // decoder on the arrived rows of B. Throws std::invalid_argument for a member id out of
  // range or a member listed twice.
  virtual Decoding decode(std::span<const int> arrived) const;

  int members() const { return static_cast<int>(encoding_.rows()); }
  int partitions() const { return static_cast<int>(encoding_.cols()); }
  // B: one row per member, one column per partition, in double so that decoding is exact to
  // round-off even when messages are float.
  const Eigen::MatrixXd& encoding() const { return encoding_; }
  // The partitions member i must hold and compute (non-zero entries of its row), ascending.
  std::vector<int> support(int member) const;
  // Computation load: the most partitions any member computes.
  int computation_load() const;

 protected:
  // Takes B (rows: members, columns: partitions); throws std::invalid_argument for an empty
  // or non-finite matrix.
  explicit GradientCode(Eigen::MatrixXd encoding, double tolerance = 1e-8);
  // Throws std::invalid_argument for a member id out of range or listed twice.
  void check_arrived(std::span<const int> arrived) const;
  // The rows of B of the arrived members, in arrival order, after validating the list.
  Eigen::MatrixXd arrived_rows(std::span<const int> arrived) const;
  double tolerance() const { return tolerance_; }

 private:
  Eigen::MatrixXd encoding_;
  double tolerance_;
};

}  // namespace fastk::coding
