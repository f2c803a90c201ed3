// evaluation.csv: the mean of the peers' models over time, one row per evaluation, with the
// same columns in both runtimes (time_s is virtual in `fastk sim`, and in real runs counts
// from the moment the last peer began its first iteration). experiments/plot_run.py and
// the reports read it; docs/design.md, "Run outputs", lists every file of a run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/metrics/csv_writer.h"

namespace fastk::node::metrics {

struct Evaluation {
  double time_s = 0;
  double mean_iteration = 0;  // average over peers of their current iteration
  int peers = 0;              // models averaged
  double test_loss = 0;       // of the mean model x_bar
  double test_accuracy = 0;
  double consensus_distance = 0;      // (1/N) sum ||x_i - x_bar||^2
  std::vector<double> peer_accuracy;  // each peer's own model; empty when not evaluated
};

class EvaluationCsv {
 public:
  // Streamed while a simulation runs (flushed at every evaluation), atomic when written at
  // once after a real run.
  explicit EvaluationCsv(const std::string& path,
                         FileWriter::Mode mode = FileWriter::Mode::kAtomic);
  void write(const Evaluation& e);
  void flush() { csv_.flush(); }

 private:
  CsvWriter csv_;
};

// Whether `e` meets the run's target (run.target_accuracy or run.target_loss).
bool reaches_target(const Evaluation& e, const RunConfig& run);
// Time of the first evaluation that meets the target; nullopt if none does or none is set.
std::optional<double> time_to_target(const std::vector<Evaluation>& evaluations,
                                     const RunConfig& run);

}  // namespace fastk::node::metrics
