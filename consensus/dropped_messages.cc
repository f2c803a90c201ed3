#include "consensus/dropped_messages.h"

#include <algorithm>
#include <cstring>
#include <numeric>

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
  constexpr std::uint32_t kExponent = 0x7f800000u;  // all ones: infinity or NaN
  std::uint32_t largest = 0;
  for (float v : values) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    largest = std::max(largest, bits & kExponent);
  }
  return largest != kExponent;
}

}  // namespace fastk::consensus
