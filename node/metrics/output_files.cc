#include "node/metrics/output_files.h"

#include <fstream>
#include <stdexcept>
#include <string>

#include "node/metrics/file_writer.h"

namespace fastk::node::metrics {

void write_file_atomically(const std::filesystem::path& path, std::span<const char> bytes,
                           bool durable) {
  FileWriter file(path, FileWriter::Mode::kAtomic);
  file.write({bytes.data(), bytes.size()});
  file.commit(durable);
}

void write_model(const std::filesystem::path& path, std::span<const float> model, bool durable) {
  write_file_atomically(path, {reinterpret_cast<const char*>(model.data()), model.size_bytes()},
                        durable);
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
  write_file_atomically(path, {text.data(), text.size()});
}

std::filesystem::path peer_folder(const std::filesystem::path& run_dir, int peer) {
  return run_dir / "peers" / ("peer-" + std::to_string(peer));
}

}  // namespace fastk::node::metrics
