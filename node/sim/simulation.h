// `fastk sim`: N peers of consensus::PeerProtocol in one process, in virtual time
// (simulation::VirtualNetwork), with real gradients on the configured model and data and
// compute/link times from the seeded delay models. Same inputs and seed give byte-identical
// output files whatever the number of gradient threads. With a calibration it simulates the
// calibrated machine (docs/simulation.md): the base gradient time, what the peers' threads
// pay, and the cores they share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include "consensus/runtime_sources.h"
#include "learning/specs.h"
#include "node/calibration/calibration.h"
#include "node/config/experiment_config.h"
#include "node/config/sim_settings.h"
#include "node/metrics/run_metrics.h"
#include "node/stragglers/delay_spec.h"

namespace fastk::node::sim {

// A replay of a recorded run (replay.h): its times instead of the seeded delay models, each
// peer beginning when it began in the record. Virtual seconds are then the record's seconds.
struct ReplayTimes {
  consensus::DelaySource* delays = nullptr;  // outlives the simulation
  std::vector<double> start_s;               // per peer
};

struct SimulationInputs {
  RunConfig run;
  topology::TopologySpec topology;
  learning::DataSpec data;
  learning::ModelSpec model;
  learning::OptimizerSpec optimizer;
  ConsensusConfig consensus;
  stragglers::DelaySpec stragglers;
  SimSettings sim;
  ClusterConfig cluster;                                // where peers run (calibrated)
  std::optional<calibration::Calibration> calibration;  // none: abstract virtual time
  std::vector<std::string> overrides;                   // the --set settings, for the summary
  std::optional<ReplayTimes> replay;                    // none: the seeded delay models
  ChurnConfig churn = {};                               // [churn]: peers that leave and rejoin
};

struct SimulationResult {
  int peers = 0;
  // Virtual time the run ended: of the last update when the peers ran their iterations, else
  // of the evaluation at which a stop rule ended it (or after which nothing could happen).
  double end_time_s = 0;
  bool finished = true;  // ended by a stop rule (not because nothing could happen any more)
  std::string end;       // "iterations", "duration", "target" or "stuck"
  std::optional<double> time_to_target_s;
  metrics::IterationTotals totals;
  metrics::Evaluation last;
  std::int64_t events = 0;
  std::int64_t messages = 0;
  double wait_fraction = 0;  // total wait / (peers * end time)
  nlohmann::ordered_json summary;
};

// Called after each evaluation (for progress display).
using EvaluationObserver =
    std::function<void(const metrics::Evaluation&, const metrics::IterationTotals&)>;
// Called for every finished iteration, in event order (a replay compares them with the record).
using RecordObserver = std::function<void(const consensus::IterationRecord&)>;

// Runs the simulation, writing the metrics files into `folder`. Throws
// std::invalid_argument / std::runtime_error with a message naming the bad input.
SimulationResult simulate(const SimulationInputs& inputs, const std::filesystem::path& folder,
                          const EvaluationObserver& on_evaluation = {},
                          const RecordObserver& on_record = {});

}  // namespace fastk::node::sim
