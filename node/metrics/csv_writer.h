// A CSV file written row by row, numbers in a fixed, locale-independent format so that the
// same run gives byte-identical files. Throws std::runtime_error naming the file and the
// reason when it cannot be written. Atomic or streamed as FileWriter (file_writer.h) says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "node/metrics/file_writer.h"

namespace fastk::node::metrics {

class CsvWriter {
 public:
  CsvWriter(const std::string& path, const std::vector<std::string>& columns,
            FileWriter::Mode mode = FileWriter::Mode::kAtomic);
  CsvWriter& operator<<(double value);
  CsvWriter& operator<<(std::int64_t value);
  CsvWriter& operator<<(int value) { return *this << static_cast<std::int64_t>(value); }
  CsvWriter& operator<<(const std::string& value);
  void end_row();
  // A whole row as it was written before (a resumed peer's earlier rows), without its newline.
  void copy_row(const std::string& line);
  // Streamed: writes out what is buffered (callable any number of times).
  // Atomic: the same, then renames the file into place; call it once, after the last row.
  void flush();

 private:
  void separator();
  FileWriter file_;
  std::string row_;
  bool row_started_ = false;
};

// Shortest representation that reads back to the same double ("nan" for NaN).
std::string format_number(double value);

}  // namespace fastk::node::metrics
