// The models a real peer saves during a run, for the run's mean-model evaluation over time:
// at each evaluation instant j (peer_runtime.h) the file model-t<j>.f32 (raw float32) and a
// row "instant,iteration" in snapshots.csv, in that order and the file renamed into place,
// so a reader that sees the row can read the whole model, even while the peer runs. Also the
// checked writes every peer output goes through: a full disk is an error, not an empty file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <vector>

namespace fastk::node {

class SnapshotWriter {
 public:
  // Creates <dir>/snapshots.csv. Throws std::runtime_error naming the file on failure.
  explicit SnapshotWriter(const std::filesystem::path& dir);
  void write(std::int64_t instant, std::int64_t iteration, std::span<const float> model);

 private:
  std::filesystem::path dir_;
  std::ofstream index_;
};

// instant -> iteration of every complete snapshot in a peer folder (none if no index).
std::map<std::int64_t, std::int64_t> read_snapshot_index(const std::filesystem::path& dir);
std::filesystem::path snapshot_path(const std::filesystem::path& dir, std::int64_t instant);

// A raw float32 model, written to a temporary file and renamed. Throws std::runtime_error
// naming the file when it cannot be written completely.
void write_model(const std::filesystem::path& path, std::span<const float> model);
// The model of `parameters` floats in `path`; nullopt when missing, short or too long.
std::optional<std::vector<float>> read_model(const std::filesystem::path& path,
                                             std::size_t parameters);
// JSON, written and checked like write_model.
void write_json_file(const std::filesystem::path& path, const nlohmann::ordered_json& json);

}  // namespace fastk::node
