#include "node/launch/run_outputs.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <thread>

#include "learning/data_sources.h"
#include "node/launch/snapshots.h"
#include "node/metrics/csv_writer.h"
#include "node/metrics/file_writer.h"
#include "node/metrics/mean_model.h"
#include "node/metrics/output_files.h"

namespace fastk::node {
namespace {

using metrics::peer_folder;

// A peer's summary.json; discarded (is_discarded()) when missing or unreadable.
}  // namespace

nlohmann::ordered_json read_summary(const std::filesystem::path& run_dir, int peer) {
  std::ifstream in(peer_folder(run_dir, peer) / "summary.json");
  if (!in) return nlohmann::ordered_json::parse("", nullptr, false);
  return nlohmann::ordered_json::parse(in, nullptr, false);
}

std::int64_t merge_peer_csv(const std::filesystem::path& run_dir, const std::string& name,
                            int peers, bool keep_peer_copies) {
  std::optional<metrics::FileWriter> out;  // made with the first header: no empty result
  std::int64_t rows = 0;
  for (int i = 0; i < peers; ++i) {
    std::ifstream in(peer_folder(run_dir, i) / name);
    std::string line;
    if (!std::getline(in, line)) continue;  // a peer that never started writes nothing
    if (!out) {
      out.emplace(run_dir / name, metrics::FileWriter::Mode::kAtomic);
      out->write(line + '\n');
    }
    // A last line without its newline is a row a killed peer did not finish: left out.
    while (std::getline(in, line) && !in.eof()) out->write(line + '\n'), ++rows;
  }
  if (out) {
    out->commit();
  } else {
    std::filesystem::remove(run_dir / name);  // an earlier run's, which would pass for this one's
  }
  if (!keep_peer_copies) {
    for (int i = 0; i < peers; ++i) std::filesystem::remove(peer_folder(run_dir, i) / name);
  }
  return rows;
}

PeerTimes read_peer_times(const std::filesystem::path& run_dir, int peers) {
  PeerTimes times;
  for (int i = 0; i < peers; ++i) {
    const auto s = read_summary(run_dir, i);
    if (s.is_discarded() || !s.contains("first_iteration_unix_s")) continue;
    const double first = s.value("first_iteration_unix_s", 0.0);
    const double last = s.value("last_update_unix_s", first);
    times.training_start_unix_s =
        times.peers_reported ? std::max(times.training_start_unix_s, first) : first;
    times.training_end_unix_s =
        times.peers_reported ? std::max(times.training_end_unix_s, last) : last;
    ++times.peers_reported;
  }
  return times;
}

MeanModelEvaluator::MeanModelEvaluator(const ExperimentConfig& config,
                                       std::filesystem::path run_dir, int peers, double epoch_s,
                                       double interval_s)
    : run_dir_(std::move(run_dir)), peers_(peers), epoch_s_(epoch_s), interval_s_(interval_s) {
  // The test set only: no training row is kept (for IDX files none is even turned into
  // floats), so the launcher's start-up does not pay for the whole training set.
  learning::TrainTest data = learning::load_data_rows(
      config.data,
      [](std::span<const std::int32_t>, int, std::int64_t) { return std::vector<std::int64_t>{}; });
  model_ = learning::make_model(config.model, data.train);
  test_ = std::move(data.test);
}

std::filesystem::path MeanModelEvaluator::peer_dir(int peer) const {
  return peer_folder(run_dir_, peer);
}

// What the run folder says about a peer at the moment it is read.
struct MeanModelEvaluator::PeerState {
  std::map<std::int64_t, std::int64_t> snapshots;  // instant -> iteration
  bool ended = false;  // its summary.json exists: model-final.f32 is its last model
  double end_unix_s = 0;
  std::int64_t iterations = 0;
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
  }
  return states;
}

std::optional<MeanModelEvaluator::ModelFile> MeanModelEvaluator::model_at(const PeerState& state,
                                                                          int peer,
                                                                          std::int64_t instant,
                                                                          bool exited) const {
  if (state.ended && instant_unix_s(instant) >= state.end_unix_s) {
    return ModelFile{peer_dir(peer) / "model-final.f32", state.iterations};
  }
  const auto after = state.snapshots.upper_bound(instant);
  if (after == state.snapshots.begin()) return std::nullopt;  // not started by then
  const auto at = std::prev(after);
  // A running peer's later snapshot may still come: the model is known once it has one at
  // or after the instant.
  const bool known =
      exited || state.ended || at->first == instant || after != state.snapshots.end();
  if (!known) return std::nullopt;
  return ModelFile{snapshot_path(peer_dir(peer), at->first), at->second};
}

std::vector<metrics::Evaluation> MeanModelEvaluator::evaluate_instants(bool exited,
                                                                       double end_unix_s) {
  const std::vector<PeerState> states = read_states();
  std::set<std::int64_t> instants;  // every instant some peer saved
  for (const auto& state : states)
    for (const auto& [instant, iteration] : state.snapshots) instants.insert(instant);
  std::vector<metrics::Evaluation> out;
  std::optional<std::pair<std::int64_t, std::vector<ModelFile>>> latest;
  std::vector<std::pair<double, std::vector<ModelFile>>> after_run;  // (Unix time, models)
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
    std::vector<ModelFile> files;
    bool known = true;
    for (int i = 0; i < peers_ && known; ++i) {
      auto file = model_at(states[static_cast<std::size_t>(i)], i, instant, exited);
      if (file) files.push_back(std::move(*file));
      known = file.has_value() || exited;  // after the run: the mean of the peers there were
    }
    if (!known) break;  // the later instants wait too
    if (exited) {
      done_.insert(instant);
      after_run.push_back({instant_unix_s(instant), std::move(files)});
      continue;
    }
    latest = {instant, std::move(files)};  // during the run only the latest known instant
  }
  if (exited) return evaluate_all(after_run);
  // While the peers run, each evaluation takes CPU from them: only the newest known instant
  // is evaluated (to stop at the target), the ones skipped are evaluated after the run.
  if (!exited && latest && latest->first > newest_live_) {
    newest_live_ = latest->first;
    done_.insert(latest->first);
    if (auto e = evaluate(latest->second, instant_unix_s(latest->first), *model_)) {
      out.push_back(std::move(*e));
    }
  }
  return out;
}

// After the run the peers are gone and the instants are independent: they are evaluated on
// every core this process may use (a model per thread: evaluating uses its scratch space).
// With the quickstart's 0.1 s interval this was most of the time after the last update.
std::vector<metrics::Evaluation> MeanModelEvaluator::evaluate_all(
    const std::vector<std::pair<double, std::vector<ModelFile>>>& instants) {
  std::vector<std::optional<metrics::Evaluation>> results(instants.size());
  std::atomic<std::size_t> next{0};
  // An error in one thread stops them all and is rethrown here, as it was before threads.
  std::mutex failed;
  std::exception_ptr error;
  auto work = [&](learning::Model& model) {
    try {
      for (std::size_t i = next++; i < instants.size(); i = next++) {
        results[i] = evaluate(instants[i].second, instants[i].first, model);
      }
    } catch (...) {
      next = instants.size();
      const std::lock_guard<std::mutex> hold(failed);
      if (!error) error = std::current_exception();
    }
  };
  cpu_set_t cpus;
  const int usable = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  // Each thread holds every peer's model at once: at most 8, whatever the machine.
  const std::size_t helpers =
      std::min<std::size_t>({static_cast<std::size_t>(std::max(usable, 1)), instants.size(), 8});
  std::vector<std::unique_ptr<learning::Model>> models;
  for (std::size_t t = 1; t < helpers; ++t) models.push_back(model_->clone());
  {
    std::vector<std::jthread> threads;  // joined when this scope ends, however it ends
    for (auto& model : models) threads.emplace_back(work, std::ref(*model));
    work(*model_);
  }
  if (error) std::rethrow_exception(error);
  std::vector<metrics::Evaluation> out;
  for (auto& r : results) {
    if (r) out.push_back(std::move(*r));
  }
  return out;
}

std::vector<metrics::Evaluation> MeanModelEvaluator::evaluate_new() {
  return evaluate_instants(false, std::numeric_limits<double>::infinity());
}

std::vector<metrics::Evaluation> MeanModelEvaluator::evaluate_rest(double end_unix_s) {
  return evaluate_instants(true, end_unix_s);
}

std::optional<metrics::Evaluation> MeanModelEvaluator::evaluate_final(double unix_s) {
  std::vector<ModelFile> files;
  for (int i = 0; i < peers_; ++i) {
    const auto s = read_summary(run_dir_, i);
    files.push_back({peer_dir(i) / "model-final.f32",
                     s.is_discarded() ? 0 : s.value("iterations", std::int64_t{0})});
  }
  return evaluate(files, unix_s, *model_);
}

std::optional<metrics::Evaluation> MeanModelEvaluator::evaluate(const std::vector<ModelFile>& files,
                                                                double unix_s,
                                                                learning::Model& model) const {
  std::vector<std::vector<float>> models;
  double iterations = 0;
  for (const auto& file : files) {
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
  out.time_s = unix_s;
  out.mean_iteration = iterations / static_cast<double>(models.size());
  out.peers = static_cast<int>(models.size());
  out.test_loss = e.loss;
  out.test_accuracy = e.accuracy;
  out.consensus_distance = mean.consensus_distance;
  return out;
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

namespace {

// How the run ended, from its peers' ends: a signal or the target ends every peer, a time
// budget the ones still running; "failed" when no peer reported.
std::string run_end(const std::vector<std::string>& ends) {
  for (const char* end : {"signal", "target", "duration", "iterations"}) {
    if (std::find(ends.begin(), ends.end(), end) != ends.end()) return end;
  }
  return "failed";
}

// One peer's summary into the run's totals.
void add_peer(const nlohmann::ordered_json& p, metrics::RunSummary& s, double& elapsed) {
  const auto iterations = p.value("iterations", std::int64_t{0});
  const auto k = static_cast<double>(iterations);
  s.totals.iterations += iterations;
  s.totals.awaited_sum += k * p.value("mean_awaited", 0.0);
  s.totals.used_sum += k * p.value("mean_used", 0.0);
  s.totals.backups_sum += k * p.value("mean_backups", 0.0);
  s.totals.wait_sum_s += p.value("waiting_s", 0.0);
  elapsed += p.value("elapsed_s", 0.0);
  *s.messages += p.value("messages_sent", std::int64_t{0});
  *s.bytes_sent += p.value("bytes_sent", std::uint64_t{0});
  *s.dropped_messages += p.value("dropped_messages", std::int64_t{0});
  const auto rejected = p.value("rejected_frames", nlohmann::ordered_json::object());
  for (const auto& [cause, count] : rejected.items())
    *s.rejected_frames += count.get<std::uint64_t>();
  s.peak_rss_mib_total = (std::isnan(s.peak_rss_mib_total) ? 0.0 : s.peak_rss_mib_total) +
                         p.value("peak_rss_mib", 0.0);
}

}  // namespace

metrics::RunSummary summarize_run(const std::filesystem::path& run_dir,
                                  const ExperimentConfig& config, int peers,
                                  const std::vector<metrics::Evaluation>& evaluations,
                                  double wall_s) {
  metrics::RunSummary s = metrics::summary_of_config(config, peers, "real");
  s.wall_s = wall_s;
  s.messages = s.dropped_messages = 0;
  s.bytes_sent = s.rejected_frames = 0;
  double elapsed = 0;
  std::vector<std::string> ends;
  bool all_finished = true;
  for (int i = 0; i < peers; ++i) {
    nlohmann::ordered_json p = read_summary(run_dir, i);
    if (p.is_discarded()) {
      const bool exists = std::filesystem::exists(peer_folder(run_dir, i) / "summary.json");
      s.per_peer.push_back(
          {{"peer", i},
           {"status", exists ? "unreadable summary" : "no summary (the peer failed)"}});
      all_finished = false;
      continue;
    }
    ++s.peers_reported;
    add_peer(p, s, elapsed);
    ends.push_back(p.value("end", std::string()));
    all_finished = all_finished && p.value("finished", false);
    s.per_peer.push_back(p);
  }
  const PeerTimes times = read_peer_times(run_dir, peers);
  s.training_phase_s = times.training_end_unix_s - times.training_start_unix_s;
  s.wait_fraction = elapsed > 0 ? s.totals.wait_sum_s / elapsed : 0.0;
  s.end = run_end(ends);
  s.finished = all_finished;
  s.time_to_target_s = metrics::time_to_target(evaluations, config.run);
  if (!evaluations.empty()) s.last = evaluations.back();
  return s;
}

}  // namespace fastk::node
