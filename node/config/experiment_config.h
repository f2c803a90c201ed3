// The experiment config: one TOML file, parsed here (the only place TOML++ is used) into
// plain structs that the pure libraries take. Defaults and meanings of every key are
// documented in experiments/configs/README.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/peer_protocol.h"
#include "learning/specs.h"
#include "node/config/cluster.h"
#include "node/config/security.h"
#include "node/config/sim_settings.h"
#include "node/stragglers/delay_spec.h"
#include "topology/topology.h"

namespace fastk::node {

// [run]: what a run is, when it stops and what it reports (both runtimes alike). A peer
// stops at the first of: `iterations` updates, `duration_s` seconds after its first
// iteration, the mean model reaching the target (with stop_at_target).
// The automatic evaluation interval of real runs without a duration (seconds of wall time):
// fastk run and every fastk node use it, so their snapshot instants agree.
inline constexpr double kWallClockEvaluationInterval_s = 1.0;

struct RunConfig {
  std::string name = "fastk";      // run name; the output folder is <output>/<name>
  std::uint64_t seed = 1;          // master seed; other seeds default to it
  std::int64_t iterations = 1000;  // iterations per peer (at most, with a duration)
  double duration_s = 0;           // time budget per peer; 0: none
  double eval_interval_s = 0;      // between mean-model evaluations; 0: automatic
  double target_accuracy = 0;      // report the time the mean model reaches it; 0: none
  double target_loss = 0;          // or gets its test loss below it; 0: none
  bool stop_at_target = false;     // end the run once the target is reached
  std::string output = "runs";     // output folder (relative: to the working directory)
  // neighbours.csv: a row per peer, iteration and neighbour (off for very large simulations).
  bool neighbours_csv = true;
  // Real peers save a checkpoint (node/peer/checkpoint.h) every so many iterations and every
  // so many seconds, whichever comes first; 0 turns either off (both off by default).
  std::int64_t checkpoint_every = 0;
  double checkpoint_every_s = 0;

  bool has_target() const { return target_accuracy > 0 || target_loss > 0; }
  // eval_interval_s, or when automatic: a twentieth of the duration, else `fallback_s`.
  double evaluation_interval_s(double fallback_s) const;
};

// [consensus]. protocol.iterations and protocol.optimizer are filled in by the runtime
// from [run] and the optimizer.
struct ConsensusConfig {
  consensus::ProtocolConfig protocol;
};

// [churn]: peers that leave during a run and come back (docs/simulation.md §9). Times count
// from the run's start: the go for real peers, 0 of virtual time in `fastk sim`.
struct ChurnEvent {
  enum class Kind { kLeave, kJoin };
  double at_s = 0;
  int peer = 0;
  Kind kind = Kind::kLeave;
};
struct ChurnConfig {
  std::vector<std::string> events;   // "TIME_S,PEER,EVENT" rows as the config gives them
  std::string file;                  // a CSV of such rows under the header time_s,peer,event
  std::vector<ChurnEvent> schedule;  // both, in time order (a peer's own events alternate)
};

struct ExperimentConfig {
  std::string source;                  // file the config came from ("<string>" for text)
  std::vector<std::string> overrides;  // the --set table.key=value applied, in order
  RunConfig run;
  topology::TopologySpec topology;    // [topology]; relative paths resolved against the file
  learning::DataSpec data;            // [data]; seed defaults to run.seed
  learning::ModelSpec model;          // [model]; init seed defaults to run.seed
  learning::OptimizerSpec optimizer;  // [optimizer]; sampling seed defaults to run.seed
  ConsensusConfig consensus;          // [consensus]
  stragglers::DelaySpec stragglers;   // [stragglers]
  ClusterConfig cluster;              // [cluster]
  SecurityConfig security;            // [security]
  SimSettings sim;                    // [sim]
  ChurnConfig churn;                  // [churn]
};

// Throws ConfigError listing every problem with its TOML path (syntax errors with line and
// column), or when the file cannot be read. `overrides` are command-line settings,
// "table.key=value" each (value in TOML syntax; a bare word is a string, so
// consensus.policy=full works), applied over the file's values before it is checked, so a
// bad one is reported like a bad line of the file.
ExperimentConfig load_config(const std::filesystem::path& path,
                             const std::vector<std::string>& overrides = {});
// `base_dir` resolves relative file paths inside the config.
ExperimentConfig parse_config(std::string_view text, const std::string& source,
                              const std::filesystem::path& base_dir,
                              const std::vector<std::string>& overrides = {});

// The run's identity for peers to recognise each other (HELLO): the FNV-1a hash of the
// config file's bytes and of the overrides, so peers started from different files or with
// different --set settings refuse each other.
std::uint64_t run_fingerprint(const std::filesystem::path& path,
                              const std::vector<std::string>& overrides);

}  // namespace fastk::node
