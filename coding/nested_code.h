// Nested fractional repetition code (docs/coding.md §5.9): the data is placed for the higher of
// two tolerances, s_high (groups of s_high + 1 consecutive members), and each iteration the
// members compute at one level: at the high level the whole group's s_high + 1 partitions, at
// the low level only those of their subgroup of s_low + 1, which nests inside the group. Both
// levels are plain FRC codes, so each decodes exactly with its own tolerance and never cancels.
// LevelSwitch picks the level from the stragglers observed; in gossip the level would have to
// reach the members before they compute, as dynamic roles do (§7.5): the protocol does not
// offer it.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "coding/fractional_repetition_code.h"

namespace fastk::coding {

enum class NestingLevel { kLow, kHigh };

class NestedFrc {
 public:
  // n members and partitions; needs 0 <= s_low < s_high, (s_low + 1) | (s_high + 1) and
  // (s_high + 1) | n. Throws std::invalid_argument otherwise.
  NestedFrc(int n, int s_low, int s_high);

  const FractionalRepetitionCode& code(NestingLevel level) const;
  int tolerance(NestingLevel level) const;
  // What member i stores: its group's partitions at the high level (both levels read only these).
  std::vector<int> stored(int member) const;
  // Whether `level` decodes exactly with the members in `late` missing (every subgroup, or
  // group, keeps a member). Throws std::invalid_argument for a member out of range.
  bool survives(NestingLevel level, std::span<const int> late) const;
  std::string name() const;

 private:
  int s_low_, s_high_;
  FractionalRepetitionCode low_, high_;
};

// The level for the next iteration from the stragglers of the last: up to the high level as
// soon as they would have defeated the low level (a whole subgroup late: NestedFrc::survives),
// back down after `patience` iterations in a row that the low level would have survived.
// Stragglers that persist (a Markov chain's slow state) make the last iteration a forecast of
// the next one.
class LevelSwitch {
 public:
  // Throws std::invalid_argument unless patience >= 1.
  explicit LevelSwitch(int patience);
  NestingLevel level() const { return level_; }
  NestingLevel observe(bool low_level_survived);

 private:
  int patience_;
  int calm_ = 0;
  NestingLevel level_ = NestingLevel::kLow;
};

}  // namespace fastk::coding
