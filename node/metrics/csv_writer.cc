#include "node/metrics/csv_writer.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace fastk::node::metrics {

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& columns,
                     FileWriter::Mode mode)
    : file_(path, mode) {
  for (const auto& c : columns) *this << c;
  end_row();
}

void CsvWriter::separator() {
  if (row_started_) row_ += ',';
  row_started_ = true;
}

CsvWriter& CsvWriter::operator<<(double value) {
  separator();
  row_ += format_number(value);
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::int64_t value) {
  separator();
  row_ += std::to_string(value);
  return *this;
}

CsvWriter& CsvWriter::operator<<(const std::string& value) {
  separator();
  row_ += value;
  return *this;
}

void CsvWriter::end_row() {
  row_ += '\n';
  file_.write(row_);
  row_.clear();
  row_started_ = false;
}

void CsvWriter::copy_row(const std::string& line) { file_.write(line + '\n'); }

void CsvWriter::flush() {
  if (file_.mode() == FileWriter::Mode::kStreamed) {
    file_.flush();  // no sync: a simulation flushes at every evaluation
  } else {
    file_.commit();
  }
}

}  // namespace fastk::node::metrics
