// A peer's checkpoint: what it needs to go on after it was killed (docs/protocol.md §6.4): its
// model at the start of an iteration, that iteration, and where each of its mini-batch
// samplers is. Written atomically (a temporary file, synced, renamed), so a kill during the
// write leaves the previous checkpoint; read back with every field checked, so a truncated,
// corrupt or foreign file is refused with its name and what is wrong, never half loaded.
//
// Neither the momentum vector nor the backup policy's estimates are saved: a resumed peer
// starts its momentum at 0 and its policy learns its estimates again (the adaptive rule's
// window fills within its first iterations; docs/protocol.md §3.7).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "learning/sampler.h"

namespace fastk::node::peer {

struct Checkpoint {
  int peer = 0;
  std::uint64_t config = 0;    // the config's fingerprint (run_fingerprint, without the nonce)
  std::uint64_t run = 0;       // the launch's run id (fingerprint and nonce)
  std::int64_t iteration = 0;  // the model is x(iteration): the next update makes x(iteration+1)
  std::vector<float> model;
  std::map<int, learning::SamplerState> samplers;  // PeerTrainer::sampler_states()
};

// <peer folder>/checkpoint.bin
std::filesystem::path checkpoint_path(const std::filesystem::path& peer_folder);

// Throws std::runtime_error naming the file when it cannot be written (a full disk too); the
// previous checkpoint then stays.
void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);

// What a checkpoint must match to be used.
struct CheckpointOwner {
  int peer = 0;
  std::uint64_t config = 0;  // Checkpoint::config
  std::uint64_t run = 0;     // Checkpoint::run
  std::size_t parameters = 0;
};

// nullopt when there is no file. Throws std::runtime_error naming the file and the problem
// when it is not a regular file holding a whole checkpoint of `owner` (another peer's,
// config's or launch's, a model of another size, a NaN or infinite value).
std::optional<Checkpoint> read_checkpoint(const std::filesystem::path& path,
                                          const CheckpointOwner& owner);

// When a peer saves one: every `every` iterations and every `every_s` seconds, whichever
// comes first (0 turns either off).
class CheckpointSchedule {
 public:
  CheckpointSchedule(std::int64_t every, double every_s) : every_(every), every_s_(every_s) {}
  bool enabled() const { return every_ > 0 || every_s_ > 0; }
  // After the update that made x(iteration), at `now_s`: is one due?
  bool due(std::int64_t iteration, double now_s) const;
  void saved(double now_s) { last_s_ = now_s; }
  void start(double now_s) { last_s_ = now_s; }

 private:
  std::int64_t every_;
  double every_s_;
  double last_s_ = 0;
};

}  // namespace fastk::node::peer
