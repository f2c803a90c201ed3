#include "node/metrics/run_metrics.h"

#include <fstream>
#include <stdexcept>

namespace fastk::node::metrics {
namespace {

std::filesystem::path ensure_folder(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    throw std::runtime_error("cannot create output folder '" + folder.string() +
                             "': " + error.message());
  }
  return folder;
}

}  // namespace

void IterationTotals::add(const consensus::IterationRecord& r) {
  ++iterations;
  wait_sum_s += r.wait_s();
  rejected += r.rejected;
  if (r.neighbours == 0) return;
  ++gossips;
  awaited_sum += r.awaited;
  used_sum += static_cast<double>(r.used.size());
  backups_sum += r.backups;
}

RunMetrics::RunMetrics(const std::filesystem::path& folder, bool per_peer_accuracy, bool neighbours)
    : folder_(ensure_folder(folder)),
      iterations_((folder / "iterations.csv").string(), false, neighbours),
      evaluations_csv_((folder / "evaluation.csv").string(), FileWriter::Mode::kStreamed) {
  if (per_peer_accuracy) {
    peer_accuracy_ = std::make_unique<CsvWriter>((folder / "peer_accuracy.csv").string(),
                                                 kPeerAccuracyColumns, FileWriter::Mode::kStreamed);
  }
}

void RunMetrics::record(const consensus::IterationRecord& r, double train_loss) {
  totals_.add(r);
  iterations_.write(r, train_loss);
}

void RunMetrics::evaluation(const Evaluation& e) {
  evaluations_csv_.write(e);
  if (peer_accuracy_) {
    for (std::size_t i = 0; i < e.peer_accuracy.size(); ++i) {
      *peer_accuracy_ << e.time_s << static_cast<std::int64_t>(i) << e.peer_accuracy[i];
      peer_accuracy_->end_row();
    }
  }
  evaluations_.push_back(e);
  // Every record so far is on disk with each evaluation, and the last one follows the last
  // record; a failed write (full disk) throws here.
  iterations_.flush();
  evaluations_csv_.flush();
  if (peer_accuracy_) peer_accuracy_->flush();
}

void write_final_peer_accuracy(const std::filesystem::path& run_dir, double time_s,
                               const nlohmann::ordered_json& per_peer) {
  CsvWriter csv((run_dir / "peer_accuracy.csv").string(), kPeerAccuracyColumns);
  for (const auto& p : per_peer) {
    // A peer that left no summary, or never iterated, has no model of its own to show.
    if (!p.contains("test_accuracy") || p.value("iterations", 0) == 0) continue;
    if (p["test_accuracy"].is_null()) continue;
    csv << time_s << p.value("peer", std::int64_t{0}) << p.value("test_accuracy", 0.0);
    csv.end_row();
  }
  csv.flush();
}

}  // namespace fastk::node::metrics
