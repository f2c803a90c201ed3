#include "consensus/dropped_messages.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "consensus/params.h"

namespace fastk::consensus {

std::string_view to_string(DropCause cause) {
  switch (cause) {
    case DropCause::kNotNeighbour:
      return "not a neighbour";
    case DropCause::kTagOutOfRange:
      return "tag out of range";
    case DropCause::kWrongSize:
      return "wrong model size";
    case DropCause::kNonFinite:
      return "non-finite values";
    case DropCause::kNotInTheCode:
      return "not in the code";
    case DropCause::kNotAsked:
      return "averaging not asked for";
    case DropCause::kBadDifference:
      return "bad compressed difference";
  }
  return "unknown cause";
}

std::int64_t DropCounts::total() const {
  return std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0});
}

bool all_finite(std::span<const float> values) {
  // A value is infinite or NaN when its exponent is all ones; adding one to the exponent's
  // lowest bit then carries into bit 31, and into bit 31 only then. Only and, add and or: the
  // loop vectorises with SSE2 too (a max of unsigned lanes needs SSE4.1), and it reads every
  // received model, so the portable build's baseline runs it (docs/build.md §1).
  constexpr std::uint32_t kExponent = 0x7f800000u;
  constexpr std::uint32_t kExponentOne = 0x00800000u;
  std::uint32_t carries = 0;
  for (float v : values) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    carries |= (bits & kExponent) + kExponentOne;
  }
  return (carries & 0x80000000u) == 0;
}

bool ParamBuffer::all_finite() const {
  std::int8_t known = finite_.load(std::memory_order_relaxed);
  if (known == kUnknown) {
    known = consensus::all_finite(values()) ? 1 : 0;
    finite_.store(known, std::memory_order_relaxed);
  }
  return known == 1;
}

}  // namespace fastk::consensus
