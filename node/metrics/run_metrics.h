// The metrics files `fastk sim` writes into its output folder as the simulation goes
// (times are virtual):
//   iterations.csv    one row per peer and iteration (consensus::IterationRecord + loss)
//   neighbours.csv    one row per peer, iteration and neighbour (consensus::NeighbourRecord)
//   evaluation.csv    the mean model over time (evaluation_csv.h, as in real runs)
//   peer_accuracy.csv each peer's own model at each evaluation (optional)
// Real runs write the same iterations.csv and evaluation.csv from their peers' files
// (node/launch/run_outputs.h, node/launch/mean_model_evaluator.h).
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
#include "node/metrics/evaluation_csv.h"
#include "node/metrics/iteration_csv.h"

namespace fastk::node::metrics {

// Running aggregates over every iteration record (awaited, used and backups as in
// consensus::IterationRecord). awaited, used and backups are means over the gossip iterations
// (those with neighbours): a local step of [consensus] local_steps has none to wait for.
struct IterationTotals {
  std::int64_t iterations = 0;
  std::int64_t gossips = 0;  // iterations whose round had neighbours
  double awaited_sum = 0;
  double used_sum = 0;
  double backups_sum = 0;
  double wait_sum_s = 0;      // time between own gradient done and update
  std::int64_t rejected = 0;  // neighbours' models validation left out ([consensus] validate)
  void add(const consensus::IterationRecord& r);
  double mean_awaited() const { return gossips ? awaited_sum / static_cast<double>(gossips) : 0; }
  double mean_used() const { return gossips ? used_sum / static_cast<double>(gossips) : 0; }
  double mean_backups() const { return gossips ? backups_sum / static_cast<double>(gossips) : 0; }
  double mean_wait_s() const { return iterations ? wait_sum_s / iterations : 0; }
};

// peer_accuracy.csv: each peer's own model on the test set at evaluation times (`fastk sim`
// with sim.per_peer_eval: at every evaluation; `fastk run`: at the end).
inline const std::vector<std::string> kPeerAccuracyColumns = {"time_s", "peer", "accuracy"};

// peer_accuracy.csv at `time_s`: each reported peer's own final model (the test_accuracy of
// its summary in `per_peer`), what both runtimes write unless a simulation wrote a row per
// evaluation (sim.per_peer_eval).
void write_final_peer_accuracy(const std::filesystem::path& run_dir, double time_s,
                               const nlohmann::ordered_json& per_peer);

class RunMetrics {
 public:
  // Creates the folder and the CSV files; throws std::runtime_error naming what failed.
  // `neighbours`: neighbours.csv too (iteration_csv.h).
  RunMetrics(const std::filesystem::path& folder, bool per_peer_accuracy, bool neighbours = true);
  void record(const consensus::IterationRecord& r, double train_loss);
  void evaluation(const Evaluation& e);
  const IterationTotals& totals() const { return totals_; }
  const std::vector<Evaluation>& evaluations() const { return evaluations_; }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  IterationCsv iterations_;
  EvaluationCsv evaluations_csv_;
  std::unique_ptr<CsvWriter> peer_accuracy_;
  IterationTotals totals_;
  std::vector<Evaluation> evaluations_;
};

}  // namespace fastk::node::metrics
