// iterations.csv: one row per peer and iteration (consensus::IterationRecord plus the
// mini-batch loss). The simulator and real peers write it with this one writer, so both
// runtimes' files have the same columns (times are virtual in one, real in the other).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "consensus/actions.h"
#include "node/metrics/csv_writer.h"

namespace fastk::node::metrics {

class IterationCsv {
 public:
  // `resume`: a peer that comes back keeps the rows of its earlier process up to where it
  // goes on: the file is left as it is until the first new row, which replaces every
  // earlier row of its iteration or later (they were undone by the restart).
  explicit IterationCsv(const std::string& path, bool resume = false);
  void write(const consensus::IterationRecord& r, double train_loss);
  void flush() {
    if (csv_) csv_->flush();
  }

 private:
  void open(std::int64_t first_new_iteration);
  std::string path_;
  std::optional<CsvWriter> csv_;
  std::vector<std::pair<std::int64_t, std::string>> earlier_;  // resume: iteration, row
};

}  // namespace fastk::node::metrics
