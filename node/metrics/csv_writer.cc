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

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& columns)
    : path_(path), out_(path) {
  if (!out_) throw std::runtime_error("cannot write '" + path + "'");
  for (const auto& c : columns) *this << c;
  end_row();
}

void CsvWriter::separator() {
  if (row_started_) out_ << ',';
  row_started_ = true;
}

CsvWriter& CsvWriter::operator<<(double value) {
  separator();
  out_ << format_number(value);
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::int64_t value) {
  separator();
  out_ << value;
  return *this;
}

CsvWriter& CsvWriter::operator<<(const std::string& value) {
  separator();
  out_ << value;
  return *this;
}

void CsvWriter::end_row() {
  out_ << '\n';
  row_started_ = false;
  if (!out_) throw std::runtime_error("writing '" + path_ + "' failed");
}

void CsvWriter::flush() {
  out_.flush();
  if (!out_) throw std::runtime_error("writing '" + path_ + "' failed");
}

}  // namespace fastk::node::metrics
