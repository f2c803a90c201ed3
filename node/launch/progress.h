// The status lines a peer prints on stdout for the launcher, and the launcher's one-line
// summary of all peers. A peer's stdout reaches the launcher through a pipe, locally or
// through ssh, so this is the one channel that works the same everywhere.
//
//   @progress iteration=120 iterations=600 loss=0.5321 accuracy=0.8123 waiting_s=3.2 ...
//
// Keys are optional and unknown keys are ignored, so peers and launchers of neighbouring
// versions still understand each other; a malformed line is just a log line.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fastk::node {

inline constexpr std::string_view kProgressPrefix = "@progress ";
// What a peer that waits for the launcher's go prints once it is ready (peer_runtime.h).
inline constexpr std::string_view kReadyLine = "@ready";
// What a peer that left on the launcher's 'l' ([churn]) prints as it exits, so that the
// launcher brings back only a peer that did leave (one that had finished just ends).
inline constexpr std::string_view kLeftLine = "@left";

struct PeerProgress {
  std::int64_t iteration = 0;   // iterations completed
  std::int64_t iterations = 0;  // iterations planned
  double loss = NAN;            // training loss of the latest mini-batch
  double accuracy = NAN;        // accuracy of the latest evaluation, NAN if none yet
  double elapsed_s = 0;         // since the peer started iterating
  double waiting_s = 0;         // time spent waiting for neighbours
  double mean_backup = NAN;     // mean backups so far (neighbours minus awaited)
};

std::string format_progress(const PeerProgress& p);
// nullopt when the line is not a progress line or a value does not parse.
std::optional<PeerProgress> parse_progress(std::string_view line);

// One line for the terminal: peers running, slowest..fastest iteration, loss, accuracy of
// the last evaluation a peer reported, backups, iterations/s, share of time waiting.
// `latest` holds the newest progress of each peer (nullopt: nothing heard yet).
std::string summarize_progress(const std::vector<std::optional<PeerProgress>>& latest,
                               int peers_running);

}  // namespace fastk::node
