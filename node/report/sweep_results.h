// What `fastk sweep` leaves beside its runs: every run's evaluations in one CSV, and the
// time to the target accuracy of each setting, over the runs that differ only in the key
// averaged over (run.seed by default). experiments/plot_sweep.py draws from the same files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "node/config/sweep_plan.h"

namespace fastk::node {

// DIR/sweep.csv: one column per varied key, `run` (the run's folder name), then each run's
// evaluation.csv columns, one row per evaluation. Throws std::runtime_error naming the run
// whose evaluation.csv is missing or has other columns than the first run's.
void write_sweep_csv(const std::filesystem::path& dir, const std::vector<Variation>& variations,
                     const std::vector<SweepPoint>& points);

struct Spread {
  double mean = 0, min = 0, max = 0;
  int count = 0;  // values the spread is over
};

// One setting: the points that differ only in the key averaged over.
struct SettingResult {
  std::vector<std::pair<std::string, std::string>> settings;  // without the averaged key
  int runs = 0;
  double target_accuracy = 0;  // its runs' run.target_accuracy (0: none)
  Spread time_to_target_s;     // over the runs that reached it (count = how many did)
  Spread final_accuracy;
  Spread final_time_s;
};

// Reads each point's summary.json. `over`: the key to average over (not varied: each point is
// its own setting). Throws std::runtime_error naming a summary that is missing or unreadable.
std::vector<SettingResult> sweep_settings(const std::filesystem::path& dir,
                                          const std::vector<SweepPoint>& points,
                                          const std::string& over);

// DIR/time_to_target.csv (each row with its target), and the same as a Markdown table for
// the terminal and docs; `target` names the table's column, 0 when it varies.
void write_time_to_target_csv(const std::filesystem::path& dir,
                              const std::vector<SettingResult>& results);
std::string time_to_target_table(const std::vector<SettingResult>& results, double target,
                                 const std::string& time_unit);

}  // namespace fastk::node
