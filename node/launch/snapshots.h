// The models a real peer saves during a run, for the run's mean-model evaluation over time:
// at each evaluation instant j (peer_runtime.h) the file model-t<j>.f32 (raw float32) and a
// row "instant,iteration" in snapshots.csv, in that order and the file renamed into place,
// so a reader that sees the row can read the whole model, even while the peer runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>

namespace fastk::node {

class SnapshotWriter {
 public:
  // Creates <dir>/snapshots.csv, or with `resume` (a peer that comes back) adds to the one
  // its earlier process wrote. Throws std::runtime_error naming the file on failure.
  explicit SnapshotWriter(const std::filesystem::path& dir, bool resume = false);
  // Throws std::runtime_error naming the file when the disk is full.
  void write(std::int64_t instant, std::int64_t iteration, std::span<const float> model);

 private:
  void flush_index();
  std::filesystem::path dir_;
  std::ofstream index_;
};

// instant -> iteration of every complete snapshot in a peer folder (none if no index).
std::map<std::int64_t, std::int64_t> read_snapshot_index(const std::filesystem::path& dir);
std::filesystem::path snapshot_path(const std::filesystem::path& dir, std::int64_t instant);
// Deletes the snapshots of a peer folder and their index; returns the bytes freed. They
// take a model per peer per instant (a GiB for a long run), and are only read once.
std::uintmax_t remove_snapshots(const std::filesystem::path& dir);

}  // namespace fastk::node
