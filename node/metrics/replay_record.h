// What a real peer records for `fastk sim --replay` (docs/simulation.md §8), beside its
// iterations.csv: arrivals.csv, when its protocol took each neighbour's message (a goodbye
// too), and timers.csv, when each timer the protocol armed fired. Both on the clock of
// iterations.csv, and keyed like it by the peer's own iteration, so that a peer that comes back
// (`--resume`) replaces the rows its undone iterations left. Kept with neighbours.csv: off with
// run.neighbours_csv = false, when an earlier run's are removed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "node/metrics/iteration_csv.h"

namespace fastk::node::metrics {

class ReplayRecord {
 public:
  ReplayRecord(const std::filesystem::path& dir, int peer, bool enabled, bool resume);
  // A message of `tag` from `from` (bye: its goodbye) went into the protocol at `at_s`, at
  // the peer's iteration `iteration`.
  void arrival(std::int64_t iteration, std::int64_t tag, int from, double at_s, bool bye);
  void timer(std::int64_t iteration, double at_s);
  void flush();

 private:
  int peer_;
  std::optional<ResumableCsv> arrivals_, timers_;
};

}  // namespace fastk::node::metrics
