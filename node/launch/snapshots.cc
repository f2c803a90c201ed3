#include "node/launch/snapshots.h"

#include <sstream>
#include <stdexcept>
#include <string>

namespace fastk::node {
namespace {

// Writes `bytes` to path.tmp, flushes, and renames it to `path`.
void write_atomically(const std::filesystem::path& path, const char* bytes, std::size_t size) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes, static_cast<std::streamsize>(size));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw std::runtime_error("cannot write '" + path.string() + "' (disk full?)");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot write '" + path.string() + "': " + error.message());
}

}  // namespace

SnapshotWriter::SnapshotWriter(const std::filesystem::path& dir)
    : dir_(dir), index_(dir / "snapshots.csv", std::ios::trunc) {
  index_ << "instant,iteration\n";
  index_.flush();
  if (!index_) throw std::runtime_error("cannot write '" + (dir / "snapshots.csv").string() + "'");
}

void SnapshotWriter::write(std::int64_t instant, std::int64_t iteration,
                           std::span<const float> model) {
  write_model(snapshot_path(dir_, instant), model);
  index_ << instant << ',' << iteration << '\n';
  index_.flush();
  if (!index_) {
    throw std::runtime_error("cannot write '" + (dir_ / "snapshots.csv").string() +
                             "' (disk full?)");
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

void write_model(const std::filesystem::path& path, std::span<const float> model) {
  write_atomically(path, reinterpret_cast<const char*>(model.data()), model.size_bytes());
}

std::optional<std::vector<float>> read_model(const std::filesystem::path& path,
                                             std::size_t parameters) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<float> values(parameters);
  in.read(reinterpret_cast<char*>(values.data()),
          static_cast<std::streamsize>(parameters * sizeof(float)));
  if (in.gcount() != static_cast<std::streamsize>(parameters * sizeof(float)) ||
      in.peek() != std::char_traits<char>::eof()) {
    return std::nullopt;  // truncated (a peer killed while writing) or of another model
  }
  return values;
}

void write_json_file(const std::filesystem::path& path, const nlohmann::ordered_json& json) {
  const std::string text = json.dump(2) + "\n";
  write_atomically(path, text.data(), text.size());
}

}  // namespace fastk::node
