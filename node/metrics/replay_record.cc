#include "node/metrics/replay_record.h"

#include <string>
#include <system_error>
#include <vector>

namespace fastk::node::metrics {

ReplayRecord::ReplayRecord(const std::filesystem::path& dir, int peer, bool enabled, bool resume)
    : peer_(peer) {
  if (enabled) {
    arrivals_.emplace((dir / "arrivals.csv").string(),
                      std::vector<std::string>{"peer", "iteration", "tag", "from", "at_s", "bye"},
                      resume);
    timers_.emplace((dir / "timers.csv").string(),
                    std::vector<std::string>{"peer", "iteration", "at_s"}, resume);
    return;
  }
  std::error_code ignored;  // an earlier run's would pass for this one's
  std::filesystem::remove(dir / "arrivals.csv", ignored);
  std::filesystem::remove(dir / "timers.csv", ignored);
}

void ReplayRecord::arrival(std::int64_t iteration, std::int64_t tag, int from, double at_s,
                           bool bye) {
  if (!arrivals_) return;
  CsvWriter& row = arrivals_->rows_of(iteration);
  row << peer_ << iteration << tag << from << at_s << static_cast<int>(bye);
  row.end_row();
}

void ReplayRecord::timer(std::int64_t iteration, double at_s) {
  if (!timers_) return;
  CsvWriter& row = timers_->rows_of(iteration);
  row << peer_ << iteration << at_s;
  row.end_row();
}

void ReplayRecord::flush() {
  if (arrivals_) arrivals_->flush();
  if (timers_) timers_->flush();
}

}  // namespace fastk::node::metrics
