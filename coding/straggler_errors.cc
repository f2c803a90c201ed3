#include "coding/straggler_errors.h"

#include <stdexcept>
#include <string>

#include "coding/subsets.h"

namespace fastk::coding {

StragglerErrors straggler_errors(const GradientCode& code, int stragglers, std::uint64_t max_sets) {
  const int n = code.members();
  if (stragglers < 0 || stragglers >= n) {
    throw std::invalid_argument("stragglers = " + std::to_string(stragglers) + " of " +
                                std::to_string(n) + " members: need 0 <= s < n");
  }
  const std::uint64_t sets = binomial(n, stragglers);
  if (sets > max_sets) {
    throw std::invalid_argument("C(" + std::to_string(n) + ", " + std::to_string(stragglers) +
                                ") = " + std::to_string(sets) + " straggler sets: at most " +
                                std::to_string(max_sets) + " are enumerated");
  }
  StragglerErrors result;
  result.stragglers = stragglers;
  result.worst_error = -1;
  const double k = code.partitions();
  double total = 0;
  std::vector<int> arrived;
  arrived.reserve(n);
  for_each_subset(n, stragglers, [&](std::span<const int> late) {
    // The arrivals are the members not in `late` (both ascending).
    arrived.clear();
    std::size_t next_late = 0;
    for (int member = 0; member < n; ++member) {
      if (next_late < late.size() && late[next_late] == member) {
        ++next_late;
      } else {
        arrived.push_back(member);
      }
    }
    const double error = code.decode(arrived).error / k;
    total += error;
    ++result.sets;
    if (error > result.worst_error) {
      result.worst_error = error;
      result.worst_stragglers.assign(late.begin(), late.end());
    }
  });
  result.mean_error = total / static_cast<double>(result.sets);
  return result;
}

}  // namespace fastk::coding
