// What one peer tells at the end of a run, and its peers/peer-<i>/summary.json: one schema
// for real peers (`fastk node`, node/peer/) and simulated ones (`fastk sim`).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "consensus/dropped_messages.h"
#include "learning/model.h"

namespace fastk::node::metrics {

struct Departure {
  int peer = 0;
  std::int64_t at_iteration = 0;  // own iteration when it was noticed
  std::string how;                // "bye", "silent" or "lost a difference" (compressed gossip)
};

struct PeerReport {
  // A simulated peer (`fastk sim`) has no wall clock, sockets or process: the fields marked
  // (real) are written as null for it.
  bool simulated = false;
  int peer = 0;
  std::int64_t iterations = 0;  // completed
  bool finished = false;        // ended by a stop rule (iterations, duration, target)
  bool stopped = false;         // stopped by a signal or stdin end of file
  std::string end;              // "iterations", "duration", "target", "signal" or "left"
  // (real) This process brought the peer back (`fastk node --resume`: after a failure, or a
  // [churn] leave); its counters are this process's.
  bool resumed = false;
  double elapsed_s = 0;  // from the first iteration to the last update
  // (real) The same two moments on the wall clock (Unix time), comparable across hosts as far as
  // their clocks agree: the run's mean-model times count from the latest first iteration.
  double first_iteration_unix_s = 0;
  double last_update_unix_s = 0;
  // (real) The same two moments on the machine's monotonic clock (CLOCK_MONOTONIC, shared by all
  // processes of a host), so that the peers of one host can be put on one time line.
  double first_iteration_monotonic_s = 0;
  double last_update_monotonic_s = 0;
  double startup_s = 0;   // handshake (real)
  double waiting_s = 0;   // sum over iterations of update time - gradient done
  double compute_s = 0;   // gradient computation
  double injected_s = 0;  // injected straggler sleeps (real)
  double base_gradient_s = 0;
  std::int64_t gossips = 0;  // iterations with neighbours (all but local_steps' local ones)
  double mean_awaited = 0;   // awaited, used, backups: as in consensus::IterationRecord, over
                             // the gossip iterations
  double mean_used = 0;
  double mean_backups = 0;
  std::int64_t rejected_models = 0;  // left out by validation ([consensus] validate)
  // Messages and bytes (real).
  std::uint64_t messages_sent = 0;
  std::uint64_t sends_refused = 0;         // neighbour's queue full: kept and retried
  std::uint64_t models_superseded = 0;     // refused models replaced by a newer one, never sent
  std::uint64_t differences_dropped = 0;   // compressed differences of a dropped backlog
  std::uint64_t bytes_sent = 0;            // over the sockets
  std::uint64_t shared_models_sent = 0;    // SHARED_MODEL messages (models left in shared memory)
  std::uint64_t shared_bytes = 0;          // model bytes those messages offered neighbours
  std::uint64_t shared_models_lapped = 0;  // received ones whose slot was already rewritten
  std::map<std::string, std::uint64_t> rejected;  // bad frames by cause (real)
  // Connection attempts refused before any frame (real, CURVE links), by cause.
  std::map<std::string, std::uint64_t> refused_connections;
  std::string links;  // real: "curve" (encrypted, authenticated) or "plain"
  std::vector<Departure> departures;
  // Messages the protocol dropped (consensus/dropped_messages.h), by cause.
  std::map<std::string, std::int64_t> dropped;
  // Of the own model on the test set; none when the peer left it to its launcher (fastk run
  // evaluates every peer's final model itself, in time the peers leave idle).
  std::optional<learning::Evaluation> final_eval;
  std::vector<float> final_model;
  double peak_rss_mib = 0;  // of the process (real)
};

// The nonzero counts of `drops`, named by cause.
std::map<std::string, std::int64_t> by_cause(const consensus::DropCounts& drops);

// peers/peer-<i>/summary.json of `report` (final_model is written as model-final.f32).
nlohmann::ordered_json to_json(const PeerReport& report);

}  // namespace fastk::node::metrics
