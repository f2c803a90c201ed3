// What a run leaves once its peers have ended, built from their folders (peers/peer-<i>/):
// the mean model's evaluation.csv, the merged iterations.csv, peer_accuracy.csv,
// summary.json, the table on the terminal and the plots. `fastk run` calls it after its
// launch, `fastk report` on the folder of any other launch (mpirun, srun, by hand).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/launch/run_outputs.h"
#include "node/metrics/run_summary.h"

namespace fastk::node {

struct RunResultsInput {
  const ExperimentConfig& config;
  std::filesystem::path run_dir;
  int peers = 0;
  MeanModelEvaluator& evaluator;
  std::vector<metrics::Evaluation> live_evaluations;  // made while the peers ran
  metrics::RunSummary launcher;                       // what only the launcher knows
  double wall_s = 0;                                  // of the whole launch
  bool keep_snapshots = false;
  bool plots = true;
};

// Writes everything above and returns the summary.
nlohmann::ordered_json write_run_results(RunResultsInput in);

}  // namespace fastk::node
