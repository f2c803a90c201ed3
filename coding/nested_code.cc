#include "coding/nested_code.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

int checked_low(int n, int s_low, int s_high) {
  if (s_low < 0 || s_low >= s_high || (s_high + 1) % (s_low + 1) != 0 || n < 1 ||
      n % (s_high + 1) != 0) {
    throw std::invalid_argument(
        "nested FRC needs 0 <= s_low < s_high with (s_low + 1) dividing (s_high + 1) and "
        "(s_high + 1) dividing n, got n=" +
        std::to_string(n) + " s_low=" + std::to_string(s_low) +
        " s_high=" + std::to_string(s_high));
  }
  return s_low;
}

}  // namespace

NestedFrc::NestedFrc(int n, int s_low, int s_high)
    : s_low_(checked_low(n, s_low, s_high)), s_high_(s_high), low_(n, s_low), high_(n, s_high) {}

const FractionalRepetitionCode& NestedFrc::code(NestingLevel level) const {
  switch (level) {
    case NestingLevel::kLow:
      return low_;
    case NestingLevel::kHigh:
      break;
  }
  return high_;
}

int NestedFrc::tolerance(NestingLevel level) const {
  return level == NestingLevel::kLow ? s_low_ : s_high_;
}

std::vector<int> NestedFrc::stored(int member) const { return high_.support(member); }

bool NestedFrc::survives(NestingLevel level, std::span<const int> late) const {
  const FractionalRepetitionCode& frc = code(level);
  std::vector<bool> missing(static_cast<std::size_t>(frc.members()), false);
  for (int i : late) {
    if (i < 0 || i >= frc.members()) {
      throw std::invalid_argument(name() + ": late member " + std::to_string(i) +
                                  " is out of range");
    }
    missing[static_cast<std::size_t>(i)] = true;
  }
  for (const auto& group : frc.groups()) {
    if (std::all_of(group.begin(), group.end(),
                    [&](int i) { return missing[static_cast<std::size_t>(i)]; })) {
      return false;
    }
  }
  return true;
}

std::string NestedFrc::name() const {
  return "nested_frc(n=" + std::to_string(high_.members()) + ",s=" + std::to_string(s_low_) + "/" +
         std::to_string(s_high_) + ")";
}

LevelSwitch::LevelSwitch(int patience) : patience_(patience) {
  if (patience < 1) throw std::invalid_argument("level switch needs patience >= 1");
}

NestingLevel LevelSwitch::observe(bool low_level_survived) {
  if (!low_level_survived) {
    level_ = NestingLevel::kHigh;
    calm_ = 0;
  } else if (level_ == NestingLevel::kHigh && ++calm_ >= patience_) {
    level_ = NestingLevel::kLow;
    calm_ = 0;
  }
  return level_;
}

}  // namespace fastk::coding
