// A run's summary.json: one schema for `fastk sim` and `fastk run`. Every key is there for
// both; what a runtime does not measure is null (a simulation has no bytes on sockets or
// process memory, a real run no event count). per_peer holds each peer's summary
// (peer_summary.h), the same objects as peers/peer-<i>/summary.json.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"
#include "node/metrics/run_metrics.h"

namespace fastk::node::metrics {

struct RunSummary {
  std::string runtime;  // "sim" or "real"
  std::string name;
  std::string topology;
  std::string policy;
  int peers = 0;
  std::int64_t iterations_per_peer = 0;
  double duration_s = 0;  // [run] duration_s; 0: no time budget
  std::vector<std::string> overrides;
  bool calibrated = false;
  bool ok = false;        // real: every peer exited cleanly and its outputs arrived
  bool finished = false;  // every peer ended by a stop rule
  std::string end;        // iterations, duration, target, signal, stuck (sim) or failed (real)
  double training_phase_s = 0;   // first iteration to last update (sim: virtual seconds)
  double wall_s = NAN;           // real (a simulation's files are the same bytes on every machine)
  double base_gradient_s = NAN;  // what slowdowns multiply (none: null)
  double target_accuracy = 0;
  double target_loss = 0;
  std::optional<double> time_to_target_s;
  std::optional<Evaluation> last;  // the last evaluation of the mean model
  IterationTotals totals;          // over every peer's iterations
  double wait_fraction = 0;        // total wait / total peer time
  // Messages sent: sim, models and coded gradients; real, every message the peers' links took
  // (HELLO, HELLO_ACK and BYE included).
  std::optional<std::int64_t> messages;
  // Dropped by the protocols (consensus/dropped_messages.h: sender, tag, size, NaN).
  std::optional<std::int64_t> dropped_messages;
  std::optional<std::int64_t> events;            // sim
  std::optional<std::uint64_t> bytes_sent;       // real
  std::optional<std::uint64_t> rejected_frames;  // real: frames the wire decoder rejected
  double peak_rss_mib_total = NAN;               // real
  int peers_reported = 0;
  std::vector<int> outputs_not_fetched;  // real: remote peers whose files did not arrive
  // real: how each peer whose process failed ended, from the launcher (launch/launcher.h
  // how_it_ended): {"status", "host", "signal", "exit_code", "said"}, added to its per_peer
  // entry as "failure" (its "status" too when it left no summary).
  std::map<int, nlohmann::ordered_json> peer_failures;
  nlohmann::ordered_json per_peer = nlohmann::ordered_json::array();
  // [attack]: the mean model is the honest peers'; the attackers' per_peer entries say so.
  std::optional<consensus::AttackSpec> attack;
};

// "the mean model of every peer", or of the honest peers naming the attackers left out.
std::string what_the_mean_model_is(const std::optional<consensus::AttackSpec>& attack);

// The config's part: name, topology, policy, peers, iterations, duration, targets, overrides.
RunSummary summary_of_config(const ExperimentConfig& config, int peers, std::string runtime);
nlohmann::ordered_json to_json(const RunSummary& summary);

}  // namespace fastk::node::metrics
