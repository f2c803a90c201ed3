#include "node/metrics/iteration_csv.h"

#include <filesystem>
#include <fstream>

namespace fastk::node::metrics {

namespace {

const std::vector<std::string> kColumns = {"peer",         "iteration",       "neighbours",
                                           "awaited",      "required",        "used",
                                           "backups",      "start_s",         "gradient_done_s",
                                           "update_s",     "wait_s",          "self_weight",
                                           "train_loss",   "gradient_norm2",  "gradient_variance",
                                           "disagreement", "expected_time_s", "partitions_computed",
                                           "decodable",    "coded_members",   "decode_residual"};

// The rows of an earlier file with their iterations (the second column); a last line without
// its newline was cut by the kill and is left out.
std::vector<std::pair<std::int64_t, std::string>> read_rows(const std::string& path) {
  std::vector<std::pair<std::int64_t, std::string>> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line) && !in.eof()) {
    const auto comma = line.find(',');
    if (comma == std::string::npos) continue;
    try {
      rows.emplace_back(std::stoll(line.substr(comma + 1)), line);
    } catch (const std::exception&) {  // not a row of ours: dropped with the undone ones
    }
  }
  return rows;
}

const std::vector<std::string> kNeighbourColumns = {"peer", "iteration", "neighbour", "arrival_s",
                                                    "used", "tag_lag",   "bytes"};

}  // namespace

ResumableCsv::ResumableCsv(std::string path, std::vector<std::string> columns, bool resume)
    : path_(std::move(path)), columns_(std::move(columns)) {
  if (resume) {
    earlier_ = read_rows(path_);
  } else {
    open(0);
  }
}

void ResumableCsv::open(std::int64_t first_new_iteration) {
  csv_.emplace(path_, columns_, FileWriter::Mode::kStreamed);
  for (const auto& [iteration, row] : earlier_) {
    if (iteration < first_new_iteration) csv_->copy_row(row);
  }
  earlier_.clear();
  // Out of this process at once: killed again before its next flush, it would otherwise take
  // the earlier process's rows with it.
  csv_->flush();
}

CsvWriter& ResumableCsv::rows_of(std::int64_t iteration) {
  if (!csv_) open(iteration);
  return *csv_;
}

IterationCsv::IterationCsv(const std::string& path, bool resume, bool neighbours)
    : iterations_(path, kColumns, resume) {
  const std::string neighbours_path =
      (std::filesystem::path(path).parent_path() / "neighbours.csv").string();
  if (neighbours) {
    neighbours_.emplace(neighbours_path, kNeighbourColumns, resume);
  } else {
    std::error_code ignored;  // none there is what is wanted
    std::filesystem::remove(neighbours_path, ignored);
  }
}

void IterationCsv::write(const consensus::IterationRecord& r, double train_loss) {
  CsvWriter& csv = iterations_.rows_of(r.iteration);
  csv << r.peer << r.iteration << r.neighbours << r.awaited << r.required
      << static_cast<int>(r.used.size()) << r.backups << r.start_s << r.gradient_done_s
      << r.update_s << r.wait_s() << r.self_weight << train_loss << r.estimates.gradient_norm2
      << r.estimates.gradient_variance << r.estimates.disagreement << r.estimates.expected_time_s
      << r.partitions_computed << static_cast<int>(r.decodable) << r.coded_members
      << r.decode_residual;
  csv.end_row();
  if (!neighbours_) return;
  CsvWriter& rows = neighbours_->rows_of(r.iteration);
  for (const consensus::NeighbourRecord& n : r.neighbour_records) {
    rows << r.peer << r.iteration << n.neighbour << n.arrival_s << static_cast<int>(n.used)
         << n.tag_lag << n.bytes;
    rows.end_row();
  }
}

}  // namespace fastk::node::metrics
