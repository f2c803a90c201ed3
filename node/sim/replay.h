// `fastk sim --replay RUN_DIR` (docs/simulation.md §8): a recorded real run re-enacted in the
// simulator on its own times (trace_delays.h), compared with the record iteration by
// iteration, and then, on the same times, every static number of backups, for the regret of
// the recorded policy against the best of them in hindsight.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "node/sim/recorded_run.h"
#include "node/sim/simulation.h"

namespace fastk::node::sim {

// Where the replay of the recorded policy parts from the record.
struct Divergence {
  std::int64_t compared = 0;  // iterations (peer, k) compared
  std::int64_t matching = 0;  // the same awaited count, the same neighbours' models mixed
  // The earliest (in recorded time) iteration that differs.
  struct First {
    int peer = 0;
    std::int64_t iteration = 0;
    double recorded_s = 0;
    int recorded_awaited = 0, replayed_awaited = 0;
    std::vector<std::pair<int, std::int64_t>> recorded_used, replayed_used;  // neighbour, tag
  };
  std::optional<First> first;
  // |replayed - recorded| update time over the iterations before the first divergence.
  double max_time_error_s = 0;
  double median_time_error_s = 0;
};

struct ReplayedPolicy {
  std::string label;  // "adaptive (as recorded)", "static, 1 backup", ...
  consensus::PolicySpec policy;
  bool as_recorded = false;
  std::optional<double> time_to_target_s;
  double end_s = 0;
  double final_accuracy = 0;
  double mean_backups = 0;
  std::string end;  // "iterations", or "duration": stalled (replay.cc)
  std::filesystem::path folder;
};

struct ReplayReport {
  Divergence divergence;
  int peers = 0;
  int identical_final_models = 0;             // of the as-recorded replay against the record's
  std::int64_t messages_without_arrival = 0;  // after their receiver's last update
  std::int64_t messages_superseded = 0;       // a newer one took their place: not delivered
  std::vector<ReplayedPolicy> policies;       // as recorded first, then static b = 0, 1, ...
  std::optional<std::size_t> best_static;     // index into policies: shortest time to target
  double target_accuracy = 0;
};

struct ReplayOptions {
  int threads = 0;              // gradient threads; 0: the config's
  double eval_interval_s = 0;   // 0: a tenth of the record's
  bool static_policies = true;  // also replay every static number of backups
  std::function<void(const ReplayedPolicy&)> on_policy_done;
};

// Replays `run` into subfolders of `folder` and writes replay.json there.
ReplayReport replay(const RecordedRun& run, const std::filesystem::path& folder,
                    const ReplayOptions& options);

}  // namespace fastk::node::sim
