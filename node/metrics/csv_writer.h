// A CSV file written row by row, numbers in a fixed, locale-independent format so that the
// same run gives byte-identical files. Throws std::runtime_error naming the file when it
// cannot be written.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace fastk::node::metrics {

class CsvWriter {
 public:
  CsvWriter(const std::string& path, const std::vector<std::string>& columns);
  CsvWriter& operator<<(double value);
  CsvWriter& operator<<(std::int64_t value);
  CsvWriter& operator<<(int value) { return *this << static_cast<std::int64_t>(value); }
  CsvWriter& operator<<(const std::string& value);
  void end_row();
  // Writes out what is buffered; throws std::runtime_error naming the file if that fails (a
  // full disk shows here, not at end_row). Call it once the last row is written.
  void flush();

 private:
  void separator();
  std::string path_;
  std::ofstream out_;
  bool row_started_ = false;
};

// Shortest representation that reads back to the same double ("nan" for NaN).
std::string format_number(double value);

}  // namespace fastk::node::metrics
