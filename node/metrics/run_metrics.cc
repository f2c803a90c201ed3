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
  backups_sum += r.backups;
  awaited_sum += r.awaited;
  wait_sum_s += r.wait_s();
}

RunMetrics::RunMetrics(const std::filesystem::path& folder, bool per_peer_accuracy)
    : folder_(ensure_folder(folder)),
      iterations_((folder / "iterations.csv").string()),
      evaluations_csv_(
          (folder / "evaluations.csv").string(),
          {"time_s", "mean_iteration", "test_loss", "test_accuracy", "consensus_distance",
           "peer_accuracy_min", "peer_accuracy_mean", "peer_accuracy_max"}) {
  if (per_peer_accuracy) {
    peer_accuracy_ =
        std::make_unique<CsvWriter>((folder / "peer_accuracy.csv").string(),
                                    std::vector<std::string>{"time_s", "peer", "accuracy"});
  }
}

void RunMetrics::record(const consensus::IterationRecord& r, double train_loss) {
  totals_.add(r);
  iterations_.write(r, train_loss);
}

void RunMetrics::evaluation(const Evaluation& e) {
  double lo = consensus::kNotEstimated, hi = consensus::kNotEstimated,
         mean = consensus::kNotEstimated;
  if (!e.peer_accuracy.empty()) {
    lo = hi = e.peer_accuracy[0];
    mean = 0;
    for (double a : e.peer_accuracy) {
      lo = std::min(lo, a);
      hi = std::max(hi, a);
      mean += a;
    }
    mean /= static_cast<double>(e.peer_accuracy.size());
  }
  evaluations_csv_ << e.time_s << e.mean_iteration << e.test_loss << e.test_accuracy
                   << e.consensus_distance << lo << mean << hi;
  evaluations_csv_.end_row();
  if (peer_accuracy_) {
    for (std::size_t i = 0; i < e.peer_accuracy.size(); ++i) {
      *peer_accuracy_ << e.time_s << static_cast<std::int64_t>(i) << e.peer_accuracy[i];
      peer_accuracy_->end_row();
    }
  }
  evaluations_.push_back(e);
  iterations_.flush();
  evaluations_csv_.flush();
}

std::optional<double> time_to_target(const std::vector<Evaluation>& evaluations,
                                     double target_accuracy, double target_loss) {
  if (target_accuracy <= 0 && target_loss <= 0) return std::nullopt;
  for (const auto& e : evaluations) {
    if ((target_accuracy > 0 && e.test_accuracy >= target_accuracy) ||
        (target_loss > 0 && e.test_loss <= target_loss)) {
      return e.time_s;
    }
  }
  return std::nullopt;
}

void write_json(const std::filesystem::path& path, const nlohmann::ordered_json& json) {
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

}  // namespace fastk::node::metrics
