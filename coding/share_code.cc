#include "coding/share_code.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>

#include "coding/cyclic_mds_code.h"
#include "coding/cyclic_repetition_code.h"
#include "coding/grouped_mds_code.h"
#include "coding/subsets.h"

namespace fastk::coding {
namespace {

// Seeds tried for a cyclic MDS code; the one with the smallest error gain is kept.
constexpr int kCyclicMdsCandidates = 20;

// The most that decoding from any members - s shares multiplies an error in the members'
// partial gradients by: max over arrival sets S of sum_u sum_{r in S} |a_ur| ||C_r||_1. In
// gossip the members evaluate at different models, so this gain, not exactness, sets the
// decoded gradient's error (docs/coding.md §7.2, §7.7); over Gaussian draws it is
// heavy-tailed (for 4 members, s = 1, m = 2: 26 at the best of 50 seeds, 2,232 at the worst).
// Stops early, with a gain that rounds above `beat`, once the code cannot beat it: only the
// winner needs its exact figure.
double worst_error_gain(const CommunicationEfficientCode& code, int stragglers, double beat) {
  const int n = code.members();
  double worst = 0;
  for_each_subset(n, n - stragglers, [&](std::span<const int> arrived) {
    if (three_significant_digits(worst) > beat) return;
    const SubBlockDecoding decoding = code.decode(arrived);
    if (!decoding.decodable) {
      worst = std::numeric_limits<double>::infinity();
      return;
    }
    double gain = 0;
    for (const Decoding& sub : decoding.sub_blocks) {
      for (std::size_t r = 0; r < arrived.size(); ++r) {
        gain += std::abs(sub.coefficients[r]) * code.coefficients().row(arrived[r]).lpNorm<1>();
      }
    }
    worst = std::max(worst, gain);
  });
  return worst;
}

// A gradient code (one full-length message per member) as a communication-efficient code
// with one sub-block: C = B, so one encoder and decoder serve every share scheme.
class FullLengthShares : public CommunicationEfficientCode {
 public:
  explicit FullLengthShares(const CyclicRepetitionCode& code)
      : CommunicationEfficientCode(code.encoding(), code.partitions(), 1,
                                   code.stragglers_tolerated()),
        name_(code.name()) {}
  std::string name() const override { return name_; }

 private:
  std::string name_;
};

std::shared_ptr<const CommunicationEfficientCode> grouped_mds(const NeighbourhoodCodeSpec& spec,
                                                              int d) {
  const int m = members_needed(spec, d);
  // Choosing the generator conditions every m-subset of the block, for 10 seeds.
  if (binomial(d, m) > kMaxMdsSubsets) {
    throw std::invalid_argument(
        "coding.scheme = \"mds\": a block of " + std::to_string(d) + " members with sub_blocks " +
        std::to_string(m) + " has " + std::to_string(binomial(d, m)) +
        " ways to pick its covering members, too many to choose a code from (at most " +
        std::to_string(kMaxMdsSubsets) + "): lower coding.stragglers or coding.sub_blocks");
  }
  return std::make_shared<GroupedMdsCode>(d, d - m, m);
}

std::shared_ptr<const CommunicationEfficientCode> cyclic_mds(const NeighbourhoodCodeSpec& spec,
                                                             int n) {
  if (binomial(n, n - spec.stragglers) > kMaxMdsSubsets) {
    throw std::invalid_argument(
        "coding.scheme = \"cyclic_mds\": a block of " + std::to_string(n) + " neighbours has " +
        std::to_string(binomial(n, n - spec.stragglers)) + " ways to lose " +
        std::to_string(spec.stragglers) + ", too many to choose a code from (at most " +
        std::to_string(kMaxMdsSubsets) + "): lower coding.stragglers or the degree");
  }
  std::shared_ptr<const CyclicMdsCode> best;
  double best_gain = std::numeric_limits<double>::infinity();
  for (std::uint64_t seed = 1; seed <= kCyclicMdsCandidates; ++seed) {
    try {
      auto code = std::make_shared<const CyclicMdsCode>(n, spec.stragglers, spec.sub_blocks, seed);
      const double gain =
          three_significant_digits(worst_error_gain(*code, spec.stragglers, best_gain));
      if (!best || gain < best_gain) {  // ties: the lower seed
        best_gain = gain;
        best = std::move(code);
      }
    } catch (const std::invalid_argument&) {
      // A singular weight system (probability 0): the next seed.
    }
  }
  if (!best || !std::isfinite(best_gain)) {
    throw std::invalid_argument("coding.scheme = \"cyclic_mds\": no usable code for a block of " +
                                std::to_string(n) + " neighbours");
  }
  return best;
}

std::shared_ptr<const CommunicationEfficientCode> build(const NeighbourhoodCodeSpec& spec,
                                                        int members) {
  switch (spec.scheme) {
    case Scheme::kMds:
      return grouped_mds(spec, members);
    case Scheme::kCyclicRepetition:
      return std::make_shared<FullLengthShares>(CyclicRepetitionCode(members, spec.stragglers));
    case Scheme::kCyclicMds:
      return cyclic_mds(spec, members);
    case Scheme::kNone:
    case Scheme::kFrc:
      break;
  }
  throw std::invalid_argument("coding.scheme = \"" + to_string(spec.scheme) +
                              "\" sends no coded shares");
}

}  // namespace

std::shared_ptr<const CommunicationEfficientCode> make_share_code(const NeighbourhoodCodeSpec& spec,
                                                                  int members) {
  using Key = std::tuple<Scheme, int, int, int>;
  // One book per thread: coding/ stays free of locks, and the peers a simulation builds on one
  // thread share their codes.
  thread_local std::map<Key, std::shared_ptr<const CommunicationEfficientCode>> built;
  // sub_blocks means nothing to crc: one key for any value.
  const Key key{spec.scheme, members, spec.stragglers,
                cuts_messages(spec.scheme) ? spec.sub_blocks : 1};
  auto& code = built[key];
  if (!code) code = build(spec, members);  // a throw leaves the entry empty: the next call retries
  return code;
}

}  // namespace fastk::coding
