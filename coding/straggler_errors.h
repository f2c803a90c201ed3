// Which stragglers hurt a code (docs/coding.md §5.8): an approximate code's error err(S)
// (docs/coding.md §1.3) depends on the arrival set S. Over every set of s stragglers, its mean is
// what uniformly random stragglers cost and its maximum what an adversary who picks them costs;
// Kadhe et al.'s claim for block designs is that the two are equal.
#pragma once

#include <cstdint>
#include <vector>

#include "coding/gradient_code.h"

namespace fastk::coding {

struct StragglerErrors {
  int stragglers = 0;
  std::uint64_t sets = 0;             // straggler sets evaluated: all C(n, s) of them
  double mean_error = 0;              // mean of err(S)/k: uniformly random stragglers
  double worst_error = 0;             // max of err(S)/k: an adversary's choice
  std::vector<int> worst_stragglers;  // the first set, in lexicographic order, that attains it
};

// Decodes every arrival set that leaves out `stragglers` of the code's members with the code's
// own decode() (the optimal decoder unless the code fixes another) and reports err(S) / k.
// Throws std::invalid_argument when stragglers is outside [0, n) or C(n, stragglers) exceeds
// max_sets (an enumeration that would not finish).
StragglerErrors straggler_errors(const GradientCode& code, int stragglers,
                                 std::uint64_t max_sets = 1'000'000);

}  // namespace fastk::coding
