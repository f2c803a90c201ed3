#include "node/launch/run_outputs.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "node/metrics/file_writer.h"
#include "node/metrics/output_files.h"

namespace fastk::node {

using metrics::peer_folder;

// Discarded (is_discarded()) when missing or unreadable.
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

int remove_peer_temporaries(const std::filesystem::path& run_dir, int peers) {
  int removed = 0;
  for (int i = 0; i < peers; ++i) {
    std::error_code error;  // a peer that never started has no folder
    for (const auto& entry : std::filesystem::directory_iterator(peer_folder(run_dir, i), error)) {
      if (entry.is_regular_file() && entry.path().extension() == ".tmp") {
        removed += std::filesystem::remove(entry.path()) ? 1 : 0;
      }
    }
  }
  return removed;
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
  // Means over the gossip iterations (all of them, unless local_steps), weighted by their count.
  const auto gossips = p.value("gossips", iterations);
  const auto k = static_cast<double>(gossips);
  s.totals.iterations += iterations;
  s.totals.gossips += gossips;
  s.totals.awaited_sum += k * p.value("mean_awaited", 0.0);
  s.totals.used_sum += k * p.value("mean_used", 0.0);
  s.totals.backups_sum += k * p.value("mean_backups", 0.0);
  s.totals.wait_sum_s += p.value("waiting_s", 0.0);
  s.totals.rejected += p.value("rejected_models", std::int64_t{0});
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
