// The metrics files `fastk sim` writes into its output folder (times are virtual):
//   iterations.csv    one row per peer and iteration (consensus::IterationRecord + loss)
//   evaluations.csv   periodic evaluation of the mean model, consensus distance, peer spread
//   peer_accuracy.csv each peer's own model at each evaluation (optional)
//   summary.json      written with write_json by node/sim/simulation.cc
// Real runs write their own files (node/cli/node_command.cc per peer, node/launch/ for the
// run; the mean-model file there is evaluation.csv): see docs/design.md, "Configuration, CLI
// and run outputs".
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "consensus/actions.h"
#include "node/metrics/csv_writer.h"
#include "node/metrics/iteration_csv.h"

namespace fastk::node::metrics {

struct Evaluation {
  double time_s = 0;
  double mean_iteration = 0;  // average over peers of their current iteration
  double test_loss = 0;       // of the mean model x_bar
  double test_accuracy = 0;
  double consensus_distance = 0;      // (1/N) sum ||x_i - x_bar||^2
  std::vector<double> peer_accuracy;  // empty when per-peer evaluation is off
};

// Running aggregates over every iteration record.
struct IterationTotals {
  std::int64_t iterations = 0;
  double backups_sum = 0;  // b used
  double awaited_sum = 0;  // m decided
  double wait_sum_s = 0;   // time between own gradient done and update
  void add(const consensus::IterationRecord& r);
  double mean_backups() const { return iterations ? backups_sum / iterations : 0; }
  double mean_awaited() const { return iterations ? awaited_sum / iterations : 0; }
  double mean_wait_s() const { return iterations ? wait_sum_s / iterations : 0; }
};

class RunMetrics {
 public:
  // Creates the folder and the CSV files; throws std::runtime_error naming what failed.
  RunMetrics(const std::filesystem::path& folder, bool per_peer_accuracy);
  void record(const consensus::IterationRecord& r, double train_loss);
  void evaluation(const Evaluation& e);
  const IterationTotals& totals() const { return totals_; }
  const std::vector<Evaluation>& evaluations() const { return evaluations_; }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  IterationCsv iterations_;
  CsvWriter evaluations_csv_;
  std::unique_ptr<CsvWriter> peer_accuracy_;
  IterationTotals totals_;
  std::vector<Evaluation> evaluations_;
};

// First evaluation time at which accuracy >= target_accuracy (if > 0) or loss <=
// target_loss (if > 0); nullopt if never or no target.
std::optional<double> time_to_target(const std::vector<Evaluation>& evaluations,
                                     double target_accuracy, double target_loss);

void write_json(const std::filesystem::path& path, const nlohmann::ordered_json& json);

}  // namespace fastk::node::metrics
