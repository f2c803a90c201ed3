#include "node/metrics/output_files.h"

#include <fstream>
#include <stdexcept>
#include <string>

namespace fastk::node::metrics {

void write_file_atomically(const std::filesystem::path& path, std::span<const char> bytes) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();  // the last buffered bytes reach the disk here, or fail here
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

void write_model(const std::filesystem::path& path, std::span<const float> model) {
  write_file_atomically(path, {reinterpret_cast<const char*>(model.data()), model.size_bytes()});
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
