// A real run as `fastk sim --replay` reads it back (docs/simulation.md §8). A `fastk run`
// folder holds everything a replay needs: the config it ran (config.toml and the --set
// overrides its summary lists), when each peer began (its summary's Unix time), when each of
// its iterations began and its gradient was taken, what it awaited and which neighbours it
// mixed (iterations.csv, neighbours.csv), and when its protocol took each neighbour's
// message (arrivals.csv). Times here are on one clock, the run's: seconds from the moment the
// first peer began iterating.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "node/config/experiment_config.h"

namespace fastk::node::sim {

struct RecordedIteration {
  double start_s = 0;          // the iteration began (the input that ended the last one)
  double gradient_done_s = 0;  // the protocol took its gradient
  double update_s = 0;
  int awaited = 0;
  // The neighbours mixed, ascending, each with the tag of its model mixed.
  std::vector<std::pair<int, std::int64_t>> used;
};

struct RecordedPeer {
  double began_s = 0;  // its first iteration, on the run's clock (clocks_shared: exact)
  std::vector<RecordedIteration> iterations;  // k = 0, 1, ...
};

struct RecordedRun {
  std::filesystem::path folder;
  ExperimentConfig config;
  std::vector<RecordedPeer> peers;
  // When `to` took `from`'s message of tag k, by (to, from, k); the first, if it came twice.
  std::map<std::pair<int, int>, std::map<std::int64_t, double>> arrivals;  // (to, from) -> k
  std::map<std::pair<int, int>, double> goodbyes;   // (to, from) -> when `to` took its BYE
  std::int64_t messages = 0;                        // rows of arrivals.csv
  std::vector<std::vector<double>> timers_fired_s;  // per peer, ascending (timers.csv)
  // The peers shared one machine's monotonic clock (their starts are aligned on it, exactly);
  // else on their Unix clocks, as well as the hosts' clocks agree.
  bool clocks_shared = false;
  std::optional<double> time_to_target_s;  // the record's, from its summary
  double training_phase_s = 0;
};

// Reads and checks a run folder. Throws std::invalid_argument naming what is missing, cut
// short or inconsistent: not a real run's folder, a run recorded without arrivals.csv, a peer
// that did not run every iteration, a row that is not a number, a message from a peer that is
// not a neighbour in the config's graph, or a config a replay cannot re-enact.
RecordedRun read_recorded_run(const std::filesystem::path& folder);

// Throws std::invalid_argument naming the first keys where `other` (a CONFIG given with
// --replay) differs from the recorded run's config; run.name and run.output may differ.
void check_same_config(const RecordedRun& run, const ExperimentConfig& other);

}  // namespace fastk::node::sim
