// The checked writes every output file goes through (models, summaries, calibrations): the
// bytes go to <path>.tmp, are synced and renamed into place, so a reader never sees half a
// file and a full disk is an error naming the file, never an empty or truncated output.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <vector>

namespace fastk::node::metrics {

// Throws std::runtime_error naming the file and the reason when it cannot be written
// completely. `durable`: synced to the disk before the rename (file_writer.h).
void write_file_atomically(const std::filesystem::path& path, std::span<const char> bytes,
                           bool durable = true);
// A raw float32 model (little-endian, as the CPU stores it). Snapshots taken while a peer
// runs are not `durable`: a sync per snapshot would stall the peer's I/O thread.
void write_model(const std::filesystem::path& path, std::span<const float> model,
                 bool durable = true);
// The model of `parameters` floats in `path`; nullopt when missing, short or too long.
std::optional<std::vector<float>> read_model(const std::filesystem::path& path,
                                             std::size_t parameters);
// <run_dir>/peers/peer-<peer>: where each peer's files go, in both runtimes.
std::filesystem::path peer_folder(const std::filesystem::path& run_dir, int peer);
// In a peer's folder: {"config": absolute path of the config it ran, "overrides": [--set
// values]}, so that `fastk report RUN_DIR` reads the config the peers read.
inline constexpr const char* kPeerLaunchFile = "launch.json";
// JSON, indented by two, with a final newline.
void write_json_file(const std::filesystem::path& path, const nlohmann::ordered_json& json);

}  // namespace fastk::node::metrics
