// What `fastk run` makes of its peers' outputs: while they run, the mean model at every
// evaluation instant all of them have a snapshot of (for the progress line and
// run.stop_at_target); once they have exited, run-level CSVs with every peer's rows,
// evaluation.csv (metrics/evaluation_csv.h) and the run summary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "learning/dataset.h"
#include "learning/model.h"
#include "node/config/experiment_config.h"
#include "node/metrics/evaluation_csv.h"
#include "node/metrics/run_summary.h"

namespace fastk::node {

// Concatenates peers/peer-*/<name> into <run_dir>/<name> (one header), then removes the
// peers' copies unless `keep_peer_copies`, so that a run folder has the files of a simulated
// one. Returns the rows.
std::int64_t merge_peer_csv(const std::filesystem::path& run_dir, const std::string& name,
                            int peers, bool keep_peer_copies = false);

// peers/peer-<peer>/summary.json, discarded (is_discarded()) when missing or unreadable.
nlohmann::ordered_json read_summary(const std::filesystem::path& run_dir, int peer);

// The peers' times as their summaries give them (Unix seconds).
struct PeerTimes {
  double training_start_unix_s = 0;  // the latest first iteration: every peer is running
  double training_end_unix_s = 0;    // the last update of any peer
  int peers_reported = 0;
};
PeerTimes read_peer_times(const std::filesystem::path& run_dir, int peers);

// Evaluates the mean of the peers' snapshots (launch/snapshots.h) on the test set. At an
// instant each peer counts with its latest snapshot at or before it, or, once past its last
// update, its final model (a peer that stopped early still holds that model).
class MeanModelEvaluator {
 public:
  // Loads the test set and the model of `config`. Instants are epoch_s + j * interval_s.
  MeanModelEvaluator(const ExperimentConfig& config, std::filesystem::path run_dir, int peers,
                     double epoch_s, double interval_s);
  // While the peers run: the newest instant at which every peer's model is known (each has a
  // snapshot at or after it, or has ended), if not evaluated before; the older ones it skips
  // are left to evaluate_rest, so that the peers lose as little CPU as possible. time_s is
  // the instant's Unix time (see with_times).
  std::vector<metrics::Evaluation> evaluate_new();
  // Once every peer has exited: the rest of the instants before end_unix_s (a peer killed
  // early counts with its last snapshot).
  std::vector<metrics::Evaluation> evaluate_rest(double end_unix_s);
  // The mean of the peers' final models (model-final.f32) at `unix_s`; nullopt if none.
  std::optional<metrics::Evaluation> evaluate_final(double unix_s);
  std::size_t parameters() const { return model_->num_parameters(); }
  // `evaluations` with times counted from the training start, those before it dropped.
  static std::vector<metrics::Evaluation> with_times(std::vector<metrics::Evaluation> evaluations,
                                                     double training_start_unix_s);

 private:
  struct PeerState;
  struct ModelFile {
    std::filesystem::path path;
    std::int64_t iteration = 0;
  };
  std::vector<PeerState> read_states() const;
  std::optional<ModelFile> model_at(const PeerState& state, int peer, std::int64_t instant,
                                    bool exited) const;
  std::vector<metrics::Evaluation> evaluate_instants(bool exited, double end_unix_s);
  std::vector<metrics::Evaluation> evaluate_all(
      const std::vector<std::pair<double, std::vector<ModelFile>>>& instants);
  std::optional<metrics::Evaluation> evaluate(const std::vector<ModelFile>& files, double unix_s,
                                              learning::Model& model) const;
  double instant_unix_s(std::int64_t instant) const;
  std::filesystem::path peer_dir(int peer) const;

  std::filesystem::path run_dir_;
  int peers_;
  double epoch_s_;
  double interval_s_;
  learning::Dataset test_;
  std::unique_ptr<learning::Model> model_;
  // The newest instant evaluated while the peers ran: older ones wait for evaluate_rest.
  std::int64_t newest_live_ = std::numeric_limits<std::int64_t>::min();
  std::set<std::int64_t> done_;
};

// The run's summary (metrics/run_summary.h) from the peers' summary.json files and the
// evaluations (times counted from the training start). The launcher's part (ok, outputs not
// fetched, base gradient, calibrated) is the caller's to fill.
metrics::RunSummary summarize_run(const std::filesystem::path& run_dir,
                                  const ExperimentConfig& config, int peers,
                                  const std::vector<metrics::Evaluation>& evaluations,
                                  double wall_s);

}  // namespace fastk::node
