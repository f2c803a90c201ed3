// What `fastk run` makes of its peers' outputs once they have exited: run-level CSVs with
// every peer's rows, the evaluation of the mean model over time (from the model snapshots
// the peers wrote at the same iterations), and the run summary.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "node/config/experiment_config.h"

namespace fastk::node {

// Concatenates peers/peer-*/<name> into <run_dir>/<name> (one header). Returns the rows.
std::int64_t merge_peer_csv(const std::filesystem::path& run_dir, const std::string& name,
                            int peers);

// For every iteration at which all surviving peers saved a snapshot (model-<k>.f32), the
// mean model's test loss and accuracy and the consensus distance (mean squared distance of
// the peers' models to their mean). Writes <run_dir>/evaluation.csv; returns its rows.
struct MeanModelEvaluation {
  std::int64_t iteration = 0;
  int peers = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  double consensus_distance = 0;
};
std::vector<MeanModelEvaluation> evaluate_mean_models(const ExperimentConfig& config,
                                                      const std::filesystem::path& run_dir,
                                                      int peers);

// Run summary from the peers' summary.json files and the mean-model evaluations.
nlohmann::ordered_json summarize_run(const std::filesystem::path& run_dir, int peers,
                                     const std::vector<MeanModelEvaluation>& evaluations,
                                     double wall_s);

}  // namespace fastk::node
