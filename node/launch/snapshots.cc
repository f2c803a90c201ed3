#include "node/launch/snapshots.h"

#include <cerrno>
#include <cstring>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "node/metrics/output_files.h"

namespace fastk::node {

namespace {

// A resumed peer's index: true if there is one, cut back to its last whole row (a kill during
// a row's write leaves part of it, which could read as a wrong iteration once completed).
bool keep_whole_rows(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto end = bytes.rfind('\n');
  if (end == std::string::npos) return false;  // not even the header: start afresh
  if (end + 1 != bytes.size()) std::filesystem::resize_file(path, end + 1);
  return true;
}

}  // namespace

SnapshotWriter::SnapshotWriter(const std::filesystem::path& dir, bool resume) : dir_(dir) {
  const auto path = dir / "snapshots.csv";
  const bool exists = resume && keep_whole_rows(path);
  index_.open(path, exists ? std::ios::app : std::ios::trunc);
  if (!exists) index_ << "instant,iteration\n";
  flush_index();
}

void SnapshotWriter::write(std::int64_t instant, std::int64_t iteration,
                           std::span<const float> model) {
  metrics::write_model(snapshot_path(dir_, instant), model, /*durable=*/false);
  index_ << instant << ',' << iteration << '\n';
  flush_index();
}

void SnapshotWriter::flush_index() {
  index_.flush();
  if (!index_) {
    throw std::runtime_error("cannot write '" + (dir_ / "snapshots.csv").string() +
                             "': " + (errno ? std::strerror(errno) : "unknown error"));
  }
}

std::map<std::int64_t, std::int64_t> read_snapshot_index(const std::filesystem::path& dir) {
  std::map<std::int64_t, std::int64_t> index;
  std::ifstream in(dir / "snapshots.csv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a last line without its newline may be half written
    std::istringstream fields(line);
    std::int64_t instant = 0, iteration = 0;
    char comma = 0;
    if (fields >> instant >> comma >> iteration && comma == ',') index[instant] = iteration;
  }
  return index;
}

std::filesystem::path snapshot_path(const std::filesystem::path& dir, std::int64_t instant) {
  return dir / ("model-t" + std::to_string(instant) + ".f32");
}

std::uintmax_t remove_snapshots(const std::filesystem::path& dir) {
  std::error_code error;
  // By name, not by index: a peer killed between a model and its index row leaves one.
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("model-t") && (name.ends_with(".f32") || name.ends_with(".f32.tmp"))) {
      files.push_back(entry.path());
    }
  }
  std::uintmax_t freed = 0;
  for (const auto& file : files) {
    const std::uintmax_t size = std::filesystem::file_size(file, error);
    if (!error && std::filesystem::remove(file, error)) freed += size;
  }
  std::filesystem::remove(dir / "snapshots.csv", error);
  return freed;
}

}  // namespace fastk::node
