// Communication-efficient code in the grouped form (docs/coding.md §4.2): members in groups of
// d = s + m that all hold the group's d partitions (as in FRC); member t of group c sends
// sum_u Gamma[u, t] G_c^(u) where G_c is the group's gradient sum and Gamma is an m x d
// Gaussian generator (MDS with probability 1). Any m members of a group recover G_c's m
// sub-vectors, so the code tolerates s stragglers per group with messages of length l/m.
#pragma once

#include <cstdint>
#include <string>

#include "coding/communication_efficient_code.h"

namespace fastk::coding {

class GroupedMdsCode : public CommunicationEfficientCode {
 public:
  // n members, tolerance s, communication reduction m; needs (s + m) | n. Keeps the best of
  // `candidates` generators (seeds seed, seed+1, ...) by the worst condition number of its
  // m x m column subsets. Throws std::invalid_argument for other shapes.
  GroupedMdsCode(int n, int s, int m, std::uint64_t seed = 1, int candidates = 10);

  std::string name() const override;
  // Gamma (m x d), shared by every group.
  const Eigen::MatrixXd& generator() const { return generator_; }
  std::uint64_t chosen_seed() const { return chosen_seed_; }
  double worst_condition() const { return worst_condition_; }

  struct Draw {
    Eigen::MatrixXd generator;
    std::uint64_t seed = 0;
    double worst_condition = 0;
  };

 private:
  GroupedMdsCode(int n, int s, int m, Draw draw);

  Eigen::MatrixXd generator_;
  std::uint64_t chosen_seed_;
  double worst_condition_;
};

}  // namespace fastk::coding
