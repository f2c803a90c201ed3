// The mean model of a real run at its evaluation instants, from the model snapshots its peers
// write (launch/snapshots.h): while they run (for the progress line, run.stop_at_target, and
// the idle-time evaluation of idle_evaluation.h) and once they have exited.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <utility>
#include <vector>

#include "learning/dataset.h"
#include "learning/model.h"
#include "node/config/experiment_config.h"
#include "node/metrics/evaluation_csv.h"

namespace fastk::node {

// Evaluates the mean of the peers' snapshots on the test set. At an instant each peer counts
// with its latest snapshot at or before it, or, once past its last update, its final model (a
// peer that stopped early still holds that model). Each instant is evaluated once, by
// whichever of evaluate_new, evaluate_oldest_known and evaluate_after_run takes it first;
// those three may run on different threads. The final model of each peer that left its own
// evaluation to the launcher (fastk node --no-final-evaluation) is evaluated alone too, for
// the per-peer table.
class MeanModelEvaluator {
 public:
  // Loads the test set and the model of `config`. Instants are epoch_s + j * interval_s.
  MeanModelEvaluator(const ExperimentConfig& config, std::filesystem::path run_dir, int peers,
                     double epoch_s, double interval_s);
  // While the peers run: the newest instant at which every peer's model is known (each has a
  // snapshot at or after it, or has ended), if not evaluated before; the older ones it skips
  // are left to the others. time_s is the instant's Unix time (see with_times).
  std::vector<metrics::Evaluation> evaluate_new();
  // While the peers run, on another thread: the oldest known instant not yet taken, with
  // `model` (a clone_model(): evaluating uses a model's scratch space), else the final model
  // of a peer that has ended (kept for evaluate_after_run). `took` is false when nothing is
  // ready yet.
  struct Step {
    bool took = false;
    std::optional<metrics::Evaluation> evaluation;  // none when no peer's model could be read
  };
  // Takes nothing once `stop` is requested (checked while holding the lock that takes).
  Step evaluate_oldest_known(learning::Model& model, const std::stop_token& stop = {});
  // Once every peer has exited, on every core this process may use: the mean of the peers'
  // final models (model-final.f32) at end_unix_s, nullopt if none could be read; with
  // `snapshots`, also the instants not taken yet before end_unix_s (a peer killed early
  // counts with its last snapshot).
  struct AfterRun {
    std::vector<metrics::Evaluation> instants;
    std::optional<metrics::Evaluation> final_models;
    // Each peer's own final model, for the peers that left it to the launcher.
    std::map<int, metrics::Evaluation> peer_finals;
  };
  AfterRun evaluate_after_run(double end_unix_s, bool snapshots);
  // Every peer's own final model evaluated so far: after evaluate_after_run and once the
  // idle threads have stopped, all of them (a thread may still be on one during the former).
  std::map<int, metrics::Evaluation> peer_finals();
  std::size_t parameters() const { return model_->num_parameters(); }
  std::unique_ptr<learning::Model> clone_model() const { return model_->clone(); }
  // How many threads evaluate at once: one per usable CPU, at most 8.
  static std::size_t evaluation_threads();
  // `evaluations` with times counted from the training start, those before it dropped.
  static std::vector<metrics::Evaluation> with_times(std::vector<metrics::Evaluation> evaluations,
                                                     double training_start_unix_s);

 private:
  struct PeerState;
  struct ModelFile {
    std::filesystem::path path;
    std::int64_t iteration = 0;
  };
  struct Instant {
    std::int64_t index = 0;
    double unix_s = 0;
    std::vector<ModelFile> files;
  };
  std::vector<PeerState> read_states() const;
  std::optional<ModelFile> model_at(const PeerState& state, int peer, std::int64_t instant,
                                    bool exited) const;
  std::vector<Instant> known_instants(const std::vector<PeerState>& states, bool exited,
                                      double end_unix_s);
  std::vector<int> peer_finals_due(const std::vector<PeerState>& states) const;
  Instant peer_final(int peer, const PeerState& state) const;
  std::vector<std::optional<metrics::Evaluation>> evaluate_all(
      const std::vector<Instant>& instants);
  std::optional<metrics::Evaluation> evaluate(const Instant& instant, learning::Model& model) const;
  double instant_unix_s(std::int64_t instant) const;
  std::filesystem::path peer_dir(int peer) const;

  std::filesystem::path run_dir_;
  int peers_;
  double epoch_s_;
  double interval_s_;
  learning::Dataset test_;
  std::unique_ptr<learning::Model> model_;
  std::optional<consensus::AttackSpec> attack_;  // its peers are left out of the mean
  std::mutex mutex_;                             // guards the two below: which instants are taken
  // The newest instant evaluate_new took: it never goes back to older ones.
  std::int64_t newest_live_ = std::numeric_limits<std::int64_t>::min();
  std::set<std::int64_t> done_;
  std::set<int> finals_taken_;
  std::map<int, metrics::Evaluation> peer_finals_;
};

}  // namespace fastk::node
