// What `fastk run` makes of its peers' outputs once they have exited: run-level CSVs with
// every peer's rows and the run summary (the mean model's evaluations come from
// mean_model_evaluator.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/metrics/evaluation_csv.h"
#include "node/metrics/run_summary.h"

namespace fastk::node {

// Concatenates peers/peer-*/<name> into <run_dir>/<name> (one header), then removes the
// peers' copies unless `keep_peer_copies`, so that a run folder has the files of a simulated
// one. Returns the rows.
std::int64_t merge_peer_csv(const std::filesystem::path& run_dir, const std::string& name,
                            int peers, bool keep_peer_copies = false);

// Removes the temporaries of atomic writes (metrics/file_writer.h) left in the peers' folders:
// a peer killed in the middle of one (stopped before it could block signals, or killed
// outright) leaves <file>.tmp, which nothing finishes once every peer has exited. Returns
// how many it removed.
int remove_peer_temporaries(const std::filesystem::path& run_dir, int peers);

// peers/peer-<peer>/summary.json, discarded (is_discarded()) when missing or unreadable.
nlohmann::ordered_json read_summary(const std::filesystem::path& run_dir, int peer);

// The peers' times as their summaries give them (Unix seconds).
struct PeerTimes {
  double training_start_unix_s = 0;  // the latest first iteration: every peer is running
  double training_end_unix_s = 0;    // the last update of any peer
  int peers_reported = 0;
};
PeerTimes read_peer_times(const std::filesystem::path& run_dir, int peers);

// The run's summary (metrics/run_summary.h) from the peers' summary.json files and the
// evaluations (times counted from the training start). The launcher's part (ok, outputs not
// fetched, base gradient, calibrated) is the caller's to fill.
metrics::RunSummary summarize_run(const std::filesystem::path& run_dir,
                                  const ExperimentConfig& config, int peers,
                                  const std::vector<metrics::Evaluation>& evaluations,
                                  double wall_s);

}  // namespace fastk::node
