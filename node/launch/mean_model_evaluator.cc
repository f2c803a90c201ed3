#include "node/launch/mean_model_evaluator.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <map>
#include <span>
#include <thread>

#include "learning/peer_data.h"
#include "node/launch/run_outputs.h"
#include "node/launch/snapshots.h"
#include "node/metrics/mean_model.h"
#include "node/metrics/output_files.h"
#include "node/os/cpu_binding.h"

namespace fastk::node {

MeanModelEvaluator::MeanModelEvaluator(const ExperimentConfig& config,
                                       std::filesystem::path run_dir, int peers, double epoch_s,
                                       double interval_s)
    : run_dir_(std::move(run_dir)),
      peers_(peers),
      epoch_s_(epoch_s),
      interval_s_(interval_s),
      attack_(config.consensus.protocol.attack) {
  // The test set only: the launcher's start-up does not pay for the training set.
  test_ = learning::load_test_set(config.data);
  model_ = learning::make_model(config.model, test_);
}

std::filesystem::path MeanModelEvaluator::peer_dir(int peer) const {
  return metrics::peer_folder(run_dir_, peer);
}

// What the run folder says about a peer at the moment it is read.
struct MeanModelEvaluator::PeerState {
  std::map<std::int64_t, std::int64_t> snapshots;  // instant -> iteration
  bool ended = false;  // its summary.json exists: model-final.f32 is its last model
  double end_unix_s = 0;
  std::int64_t iterations = 0;
  bool final_left_to_us = false;  // it trained, and did not evaluate its final model itself
  // It left to come back ([churn]): model-final.f32 is its model while it is away, and its
  // snapshots after its comeback take over; its final model is still to come.
  bool left = false;
};

std::vector<MeanModelEvaluator::PeerState> MeanModelEvaluator::read_states() const {
  std::vector<PeerState> states(static_cast<std::size_t>(peers_));
  for (int i = 0; i < peers_; ++i) {
    PeerState& state = states[static_cast<std::size_t>(i)];
    state.snapshots = read_snapshot_index(peer_dir(i));
    const auto s = read_summary(run_dir_, i);
    if (s.is_discarded()) continue;
    state.ended = true;
    state.end_unix_s = s.value("last_update_unix_s", 0.0);
    state.iterations = s.value("iterations", std::int64_t{0});
    state.left = s.value("end", std::string()) == "left";
    state.final_left_to_us = !state.left && state.iterations > 0 && s.contains("test_accuracy") &&
                             s["test_accuracy"].is_null();
  }
  return states;
}

std::optional<MeanModelEvaluator::ModelFile> MeanModelEvaluator::model_at(const PeerState& state,
                                                                          int peer,
                                                                          std::int64_t instant,
                                                                          bool exited) const {
  const auto after = state.snapshots.upper_bound(instant);
  // A peer that left and came back ([churn]): its snapshots since its comeback are its models;
  // while it was away, its model was the one it left with.
  const bool back = state.left && after != state.snapshots.begin() &&
                    instant_unix_s(std::prev(after)->first) > state.end_unix_s;
  if (state.ended && !back && instant_unix_s(instant) >= state.end_unix_s) {
    return ModelFile{peer_dir(peer) / "model-final.f32", state.iterations};
  }
  if (after == state.snapshots.begin()) return std::nullopt;  // not started by then
  const auto at = std::prev(after);
  // A running peer's later snapshot may still come: the model is known once it has one at
  // or after the instant.
  const bool known = exited || (state.ended && !state.left) || at->first == instant ||
                     after != state.snapshots.end();
  if (!known) return std::nullopt;
  return ModelFile{snapshot_path(peer_dir(peer), at->first), at->second};
}

// The instants not taken yet whose every model is known in `states`, oldest first (after the
// run, every instant before end_unix_s: the mean of the peers there were). The caller holds
// mutex_, but not while it reads the states: a thread of idle priority holding it through
// file reads could keep the launcher's own thread waiting while the peers take every core.
std::vector<MeanModelEvaluator::Instant> MeanModelEvaluator::known_instants(
    const std::vector<PeerState>& states, bool exited, double end_unix_s) {
  std::set<std::int64_t> instants;  // every instant some peer saved
  for (const auto& state : states)
    for (const auto& [instant, iteration] : state.snapshots) instants.insert(instant);
  std::vector<Instant> out;
  for (const std::int64_t instant : instants) {
    if (done_.count(instant) || instant_unix_s(instant) >= end_unix_s) continue;
    // Every peer saves its initial model at the instant it starts in: an instant before some
    // peer's first snapshot is before the training started (with_times drops it).
    const bool before_start = std::any_of(states.begin(), states.end(), [&](const PeerState& s) {
      return !s.snapshots.empty() && s.snapshots.begin()->first > instant;
    });
    if (before_start) {
      done_.insert(instant);
      continue;
    }
    Instant next{instant, instant_unix_s(instant), {}};
    bool known = true;
    for (int i = 0; i < peers_ && known; ++i) {
      if (!metrics::in_mean_model(attack_, i)) continue;
      auto file = model_at(states[static_cast<std::size_t>(i)], i, instant, exited);
      if (file) next.files.push_back(std::move(*file));
      known = file.has_value() || exited;
    }
    if (!known) break;  // the later instants wait too
    out.push_back(std::move(next));
  }
  return out;
}

std::vector<metrics::Evaluation> MeanModelEvaluator::evaluate_new() {
  std::optional<Instant> newest;
  const std::vector<PeerState> states = read_states();
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    std::vector<Instant> known =
        known_instants(states, false, std::numeric_limits<double>::infinity());
    if (known.empty() || known.back().index <= newest_live_) return {};
    newest = std::move(known.back());
    newest_live_ = newest->index;
    done_.insert(newest->index);
  }
  std::vector<metrics::Evaluation> out;
  if (auto e = evaluate(*newest, *model_)) out.push_back(std::move(*e));
  return out;
}

// The peers whose own final model is still to be evaluated. The caller holds mutex_.
std::vector<int> MeanModelEvaluator::peer_finals_due(const std::vector<PeerState>& states) const {
  std::vector<int> due;
  for (int i = 0; i < peers_; ++i) {
    if (states[std::size_t(i)].final_left_to_us && !finals_taken_.count(i)) due.push_back(i);
  }
  return due;
}

MeanModelEvaluator::Instant MeanModelEvaluator::peer_final(int peer, const PeerState& state) const {
  return {-1, state.end_unix_s, {{peer_dir(peer) / "model-final.f32", state.iterations}}};
}

MeanModelEvaluator::Step MeanModelEvaluator::evaluate_oldest_known(learning::Model& model,
                                                                   const std::stop_token& stop) {
  const std::vector<PeerState> states = read_states();
  std::optional<Instant> oldest;
  int peer = -1;
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (stop.stop_requested()) return {};
    std::vector<Instant> known =
        known_instants(states, false, std::numeric_limits<double>::infinity());
    const std::vector<int> finals = peer_finals_due(states);
    if (!known.empty()) {
      oldest = std::move(known.front());
      done_.insert(oldest->index);
    } else if (!finals.empty()) {
      peer = finals.front();
      finals_taken_.insert(peer);
    } else {
      return {};
    }
  }
  if (oldest) return {true, evaluate(*oldest, model)};
  std::optional<metrics::Evaluation> own =
      evaluate(peer_final(peer, states[std::size_t(peer)]), model);
  const std::lock_guard<std::mutex> hold(mutex_);
  if (own) peer_finals_[peer] = *own;
  return {true, std::nullopt};
}

MeanModelEvaluator::AfterRun MeanModelEvaluator::evaluate_after_run(double end_unix_s,
                                                                    bool snapshots) {
  std::vector<Instant> batch;  // the instants left, each peer's own final model, the mean's
  const std::vector<PeerState> states = read_states();
  std::vector<int> own_finals;
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (snapshots) batch = known_instants(states, true, end_unix_s);
    for (const Instant& instant : batch) done_.insert(instant.index);
    own_finals = peer_finals_due(states);
    finals_taken_.insert(own_finals.begin(), own_finals.end());
  }
  const std::size_t instants = batch.size();
  for (int peer : own_finals) batch.push_back(peer_final(peer, states[std::size_t(peer)]));
  Instant mean_of_finals{0, end_unix_s, {}};
  for (int i = 0; i < peers_; ++i) {
    if (!metrics::in_mean_model(attack_, i)) continue;
    mean_of_finals.files.push_back(
        {peer_dir(i) / "model-final.f32", states[std::size_t(i)].iterations});
  }
  batch.push_back(std::move(mean_of_finals));
  std::vector<std::optional<metrics::Evaluation>> results = evaluate_all(batch);
  AfterRun out;
  out.final_models = std::move(results.back());
  for (std::size_t k = 0; k < instants; ++k) {
    if (results[k]) out.instants.push_back(std::move(*results[k]));
  }
  const std::lock_guard<std::mutex> hold(mutex_);
  for (std::size_t k = 0; k < own_finals.size(); ++k) {
    if (results[instants + k]) peer_finals_[own_finals[k]] = *results[instants + k];
  }
  out.peer_finals = peer_finals_;
  return out;
}

// After the run the peers are gone and the instants are independent: they are evaluated on
// every core this process may use (a model per thread: evaluating uses its scratch space).
std::vector<std::optional<metrics::Evaluation>> MeanModelEvaluator::evaluate_all(
    const std::vector<Instant>& instants) {
  std::vector<std::optional<metrics::Evaluation>> results(instants.size());
  std::atomic<std::size_t> next{0};
  // An error in one thread stops them all and is rethrown here, as it was before threads.
  std::mutex failed;
  std::exception_ptr error;
  auto work = [&](learning::Model& model) {
    try {
      for (std::size_t i = next++; i < instants.size(); i = next++) {
        results[i] = evaluate(instants[i], model);
      }
    } catch (...) {
      next = instants.size();
      const std::lock_guard<std::mutex> hold(failed);
      if (!error) error = std::current_exception();
    }
  };
  const std::size_t helpers = std::min(evaluation_threads(), instants.size());
  std::vector<std::unique_ptr<learning::Model>> models;
  for (std::size_t t = 1; t < helpers; ++t) models.push_back(model_->clone());
  {
    std::vector<std::jthread> threads;  // joined when this scope ends, however it ends
    for (auto& model : models) threads.emplace_back(work, std::ref(*model));
    work(*model_);
  }
  if (error) std::rethrow_exception(error);
  return results;
}

std::optional<metrics::Evaluation> MeanModelEvaluator::evaluate(const Instant& instant,
                                                                learning::Model& model) const {
  std::vector<std::vector<float>> models;
  double iterations = 0;
  for (const auto& file : instant.files) {
    auto m = metrics::read_model(file.path, model.num_parameters());
    if (!m) {  // a peer killed before it wrote it, or a damaged file: the mean lacks it
      std::cerr << "fastk run: " << file.path.string() << " is missing or not a model of "
                << model.num_parameters() << " floats; left out of the mean model\n";
      continue;
    }
    models.push_back(std::move(*m));
    iterations += static_cast<double>(file.iteration);
  }
  if (models.empty()) return std::nullopt;
  const std::vector<std::span<const float>> views(models.begin(), models.end());
  const metrics::MeanModel mean = metrics::mean_model(views);
  const learning::Evaluation e = model.evaluate(mean.mean, test_);
  metrics::Evaluation out;
  out.time_s = instant.unix_s;
  out.mean_iteration = iterations / static_cast<double>(models.size());
  out.peers = static_cast<int>(models.size());
  out.test_loss = e.loss;
  out.test_accuracy = e.accuracy;
  out.consensus_distance = mean.consensus_distance;
  return out;
}

std::size_t MeanModelEvaluator::evaluation_threads() {
  // Each thread holds every peer's model at once: at most 8, whatever the machine.
  return std::min<std::size_t>(static_cast<std::size_t>(os::usable_cpus()), 8);
}

std::map<int, metrics::Evaluation> MeanModelEvaluator::peer_finals() {
  const std::lock_guard<std::mutex> hold(mutex_);
  return peer_finals_;
}

double MeanModelEvaluator::instant_unix_s(std::int64_t instant) const {
  return epoch_s_ + static_cast<double>(instant) * interval_s_;
}

std::vector<metrics::Evaluation> MeanModelEvaluator::with_times(
    std::vector<metrics::Evaluation> evaluations, double training_start_unix_s) {
  std::vector<metrics::Evaluation> out;
  for (auto& e : evaluations) {
    e.time_s -= training_start_unix_s;
    if (e.time_s >= 0) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace fastk::node
