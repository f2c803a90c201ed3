// iterations.csv: one row per peer and iteration (consensus::IterationRecord plus the
// mini-batch loss), and neighbours.csv: one row per peer, iteration and neighbour of that
// iteration (consensus::NeighbourRecord: arrival relative to the own gradient, used or not,
// tag lag, payload bytes). The simulator and real peers write them with this one writer, so
// both runtimes' files have the same columns (times are virtual in one, real in the other).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "consensus/actions.h"
#include "node/metrics/csv_writer.h"

namespace fastk::node::metrics {

// A streamed CSV whose second column is the iteration. `resume`: a peer that comes back keeps
// the rows of its earlier process up to where it goes on: the file is left as it is until the
// first new row, which replaces every earlier row of its iteration or later (they were undone
// by the restart).
class ResumableCsv {
 public:
  ResumableCsv(std::string path, std::vector<std::string> columns, bool resume);
  // The writer for rows of `iteration` (opening the file at the first).
  CsvWriter& rows_of(std::int64_t iteration);
  void flush() {
    if (csv_) csv_->flush();
  }

 private:
  void open(std::int64_t first_new_iteration);
  std::string path_;
  std::vector<std::string> columns_;
  std::optional<CsvWriter> csv_;
  std::vector<std::pair<std::int64_t, std::string>> earlier_;  // resume: iteration, row
};

class IterationCsv {
 public:
  // iterations.csv at `path`, and with `neighbours` neighbours.csv beside it; without, an
  // earlier neighbours.csv there is removed (it would pass for this run's).
  explicit IterationCsv(const std::string& path, bool resume = false, bool neighbours = true);
  void write(const consensus::IterationRecord& r, double train_loss);
  void flush() {
    iterations_.flush();
    if (neighbours_) neighbours_->flush();
  }

 private:
  ResumableCsv iterations_;
  std::optional<ResumableCsv> neighbours_;
};

}  // namespace fastk::node::metrics
