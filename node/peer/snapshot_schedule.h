// The evaluation instants of a run: epoch_s + j * interval_s on the wall clock (Unix time),
// the same instants on every peer, so that the launcher can average the peers' models of one
// instant (node/launch/snapshots.h). A peer takes its model at the latest instant passed, once;
// a loop turn late by more than an interval skips the instants in between (they are missing
// for this peer).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

namespace fastk::node::peer {

class SnapshotSchedule {
 public:
  // interval_s <= 0: no instants.
  SnapshotSchedule(double epoch_s, double interval_s)
      : epoch_s_(epoch_s), interval_s_(interval_s) {}

  bool enabled() const { return interval_s_ > 0; }
  // From now on, instants from the one containing `unix_s` on are due.
  void start_at(double unix_s) { next_ = instant_at(unix_s); }
  // The instant to take a snapshot for at `unix_s`, if one is due (and then not again).
  std::optional<std::int64_t> due(double unix_s) {
    if (!enabled()) return std::nullopt;
    const std::int64_t now = instant_at(unix_s);
    if (now < next_) return std::nullopt;
    next_ = now + 1;
    return now;
  }
  // Seconds from `unix_s` to the next instant due (a large number when disabled).
  double seconds_to_next(double unix_s) const {
    if (!enabled()) return 1e9;
    return epoch_s_ + static_cast<double>(next_) * interval_s_ - unix_s;
  }

 private:
  std::int64_t instant_at(double unix_s) const {
    if (!enabled()) return 0;
    return static_cast<std::int64_t>(std::floor((unix_s - epoch_s_) / interval_s_));
  }
  double epoch_s_;
  double interval_s_;
  std::int64_t next_ = 0;
};

}  // namespace fastk::node::peer
