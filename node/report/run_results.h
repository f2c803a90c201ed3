// What a run leaves once its peers have ended, built from their folders (peers/peer-<i>/):
// the mean model's evaluation.csv, the merged iterations.csv, peer_accuracy.csv,
// summary.json, the table on the terminal and the plots. `fastk run` calls it after its
// launch, `fastk report` on the folder of any other launch (mpirun, srun, by hand).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/launch/idle_evaluation.h"
#include "node/launch/mean_model_evaluator.h"
#include "node/launch/run_outputs.h"
#include "node/metrics/run_summary.h"

namespace fastk::node {

struct RunResultsInput {
  const ExperimentConfig& config;
  std::filesystem::path run_dir;
  int peers = 0;
  MeanModelEvaluator& evaluator;
  std::vector<metrics::Evaluation> live_evaluations;  // made while the peers ran
  // The idle-time evaluation of the run, still on its last instant: stopped and collected
  // here, so that its last instant overlaps the evaluation of the rest. None: fastk report.
  IdleEvaluation* idle_evaluation = nullptr;
  metrics::RunSummary launcher;  // what only the launcher knows
  // When the launch began (wall_s runs to the summary); none: not measured (null).
  std::optional<std::chrono::steady_clock::time_point> launch_started;
  // The snapshots are timed from the epoch the launcher gave its peers: without one
  // (fastk report) only the final models are evaluated.
  bool evaluate_snapshots = true;
  bool keep_snapshots = false;
  // fastk run moves the peers' iterations.csv into the run's; fastk report copies them, so
  // that a report made while a peer was missing can be made again once it is there.
  bool keep_peer_csv = false;
  bool plots = true;
};

// Writes everything above and returns the summary.
nlohmann::ordered_json write_run_results(RunResultsInput in);

}  // namespace fastk::node
