// iterations.csv: one row per peer and iteration (consensus::IterationRecord plus the
// mini-batch loss). The simulator and real peers write it with this one writer, so both
// runtimes' files have the same columns (times are virtual in one, real in the other).
#pragma once

#include <string>

#include "consensus/actions.h"
#include "node/metrics/csv_writer.h"

namespace fastk::node::metrics {

class IterationCsv {
 public:
  explicit IterationCsv(const std::string& path);
  void write(const consensus::IterationRecord& r, double train_loss);
  void flush() { csv_.flush(); }

 private:
  CsvWriter csv_;
};

}  // namespace fastk::node::metrics
