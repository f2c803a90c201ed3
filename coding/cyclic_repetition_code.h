// Cyclic repetition code (Tandon et al., docs/coding.md §3.2): member i holds partitions
// i, i+1, ..., i+s (mod n) and sends a random combination of them such that any n - s members
// span the all-ones vector. Works for any n and s < n, but decoding cancels terms, so it is
// exact only when every member evaluates at the same parameters (docs/coding.md §7.2): a reference
// code and a test subject, not the gossip default.
#pragma once

#include <cstdint>
#include <string>

#include "coding/gradient_code.h"

namespace fastk::coding {

class CyclicRepetitionCode : public GradientCode {
 public:
  // Draws `candidates` codes from seeds seed, seed+1, ... and keeps the one whose worst
  // (n-s)-row subset has the smallest condition number: the construction's conditioning is
  // heavy-tailed in the seed. Throws std::invalid_argument unless n >= 1, 0 <= s < n and
  // candidates >= 1, or when no candidate yields a valid code.
  CyclicRepetitionCode(int n, int s, std::uint64_t seed = 1, int candidates = 20);

  std::string name() const override;
  int stragglers_tolerated() const override { return s_; }

  // H (s x n) with H 1 = 0 and H b_i = 0 for every row: the rows live in null(H), which has
  // dimension n - s and contains the all-ones vector.
  const Eigen::MatrixXd& parity() const { return parity_; }
  std::uint64_t chosen_seed() const { return chosen_seed_; }
  // Largest cond(B_S) over the (n-s)-subsets (sampled when there are more than 2000).
  double worst_condition() const { return worst_condition_; }

  struct Draw {
    Eigen::MatrixXd encoding, parity;
    std::uint64_t seed = 0;
    double worst_condition = 0;
  };

 private:
  CyclicRepetitionCode(Draw draw, int s);

  int s_;
  Eigen::MatrixXd parity_;
  std::uint64_t chosen_seed_;
  double worst_condition_;
};

}  // namespace fastk::coding
