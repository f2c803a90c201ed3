// Fractional repetition code (Tandon et al., docs/coding.md §3.1): members in groups; every member
// of a group holds the home partitions of the whole group and sends their plain sum. Decoding
// takes the first responder of each group, so it needs no solve and never cancels terms: it
// stays exact when members evaluate gradients at different parameters (docs/coding.md §7.2).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "coding/gradient_code.h"

namespace fastk::coding {

class FractionalRepetitionCode : public GradientCode {
 public:
  // n members (and n partitions, partition j = member j's home data) in n/(s+1) groups of
  // s+1 consecutive members. Throws std::invalid_argument when (s+1) does not divide n.
  FractionalRepetitionCode(int n, int s);
  // Any grouping of members 0..n-1 (each exactly once), e.g. a peer alone plus pairs of its
  // neighbours when the neighbourhood size is not a multiple of s+1. Tolerates
  // (smallest group size - 1) stragglers.
  static FractionalRepetitionCode from_groups(std::vector<std::vector<int>> groups);

  std::string name() const override;
  int stragglers_tolerated() const override;
  // First responder per group gets coefficient 1, every later arrival 0; decodable as soon as
  // every group is covered (early stop: possibly with one arrival per group). Groups nobody
  // covered have alpha = 0, so err(S) = (members of uncovered groups).
  Decoding decode(std::span<const int> arrived) const override;

  const std::vector<std::vector<int>>& groups() const { return groups_; }
  // Throws std::invalid_argument for a member outside [0, n).
  int group_of(int member) const;
  // How many groups the arrivals cover; the aggregator can stop once it equals groups().size().
  int covered_groups(std::span<const int> arrived) const;
  // Coefficient 1 for the first arrival of each group, 0 for the rest.
  std::vector<double> first_responder_coefficients(std::span<const int> arrived) const;

 private:
  explicit FractionalRepetitionCode(std::vector<std::vector<int>> groups);

  std::vector<std::vector<int>> groups_;
  std::vector<int> group_of_;
};

}  // namespace fastk::coding
