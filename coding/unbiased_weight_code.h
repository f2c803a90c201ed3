// Approximate codes with fixed, non-negative weights: member i sends sum_j c_ij g_j and the
// aggregator simply adds whatever arrived by the deadline. The weights make that sum unbiased
// under independent stragglers (E[alpha_j] = 1); non-negative weights never amplify
// disagreement between members' parameters (docs/coding.md §7.2), so they suit gossip.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "coding/gradient_code.h"

namespace fastk::coding {

class UnbiasedWeightCode : public GradientCode {
 public:
  // Heterogeneous stragglers (docs/coding.md §5.7): holdings[i] = partitions member i holds,
  // straggle[i] = P(member i misses the deadline). Minimum-variance unbiased weights
  // c_ij = (1/p_i) / sum_{i' holding j} (1 - p_i')/p_i'; holders with p = 0 share the
  // partition equally and the others get 0. Throws std::invalid_argument (naming the
  // partition or member) when a partition has no holder, every holder has p = 1, or a
  // probability is outside [0, 1].
  static UnbiasedWeightCode heterogeneous(const std::vector<std::vector<int>>& holdings,
                                          int partitions, std::span<const double> straggle);
  // Stochastic gradient coding (docs/coding.md §5.6): one straggle probability p < 1 for everyone,
  // c_ij = 1 / (d_j (1 - p)) with d_j the number of holders of partition j.
  static UnbiasedWeightCode stochastic(const std::vector<std::vector<int>>& holdings,
                                       int partitions, double straggle);

  std::string name() const override { return name_; }
  int stragglers_tolerated() const override { return 0; }
  bool approximate() const override { return true; }
  // Coefficient 1 for every arrival: the weights are already in the messages.
  Decoding decode(std::span<const int> arrived) const override;

  // Var(alpha_j) = sum_i p_i (1 - p_i) c_ij^2 under independent stragglers with these p.
  double partition_variance(int partition, std::span<const double> straggle) const;

 private:
  UnbiasedWeightCode(Eigen::MatrixXd weights, std::string name);

  std::string name_;
};

}  // namespace fastk::coding
