#include "node/metrics/evaluation_csv.h"

namespace fastk::node::metrics {

EvaluationCsv::EvaluationCsv(const std::string& path, FileWriter::Mode mode)
    : csv_(
          path,
          {"time_s", "mean_iteration", "peers", "test_loss", "test_accuracy", "consensus_distance"},
          mode) {}

void EvaluationCsv::write(const Evaluation& e) {
  csv_ << e.time_s << e.mean_iteration << e.peers << e.test_loss << e.test_accuracy
       << e.consensus_distance;
  csv_.end_row();
}

bool reaches_target(const Evaluation& e, const RunConfig& run) {
  return (run.target_accuracy > 0 && e.test_accuracy >= run.target_accuracy) ||
         (run.target_loss > 0 && e.test_loss <= run.target_loss);
}

std::optional<double> time_to_target(const std::vector<Evaluation>& evaluations,
                                     const RunConfig& run) {
  for (const auto& e : evaluations) {
    if (reaches_target(e, run)) return e.time_s;
  }
  return std::nullopt;
}

}  // namespace fastk::node::metrics
