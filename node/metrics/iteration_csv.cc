#include "node/metrics/iteration_csv.h"

namespace fastk::node::metrics {

IterationCsv::IterationCsv(const std::string& path)
    : csv_(path, {"peer",         "iteration",       "neighbours",
                  "awaited",      "required",        "used",
                  "backups",      "start_s",         "gradient_done_s",
                  "update_s",     "wait_s",          "self_weight",
                  "train_loss",   "gradient_norm2",  "gradient_variance",
                  "disagreement", "expected_time_s", "partitions_computed",
                  "decodable",    "coded_members",   "decode_residual"},
           FileWriter::Mode::kStreamed) {}

void IterationCsv::write(const consensus::IterationRecord& r, double train_loss) {
  csv_ << r.peer << r.iteration << r.neighbours << r.awaited << r.required
       << static_cast<int>(r.used.size()) << r.backups << r.start_s << r.gradient_done_s
       << r.update_s << r.wait_s() << r.self_weight << train_loss << r.estimates.gradient_norm2
       << r.estimates.gradient_variance << r.estimates.disagreement << r.estimates.expected_time_s
       << r.partitions_computed << static_cast<int>(r.decodable) << r.coded_members
       << r.decode_residual;
  csv_.end_row();
}

}  // namespace fastk::node::metrics
