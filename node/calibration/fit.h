// Fitting the one cost a calibration cannot time in isolation: the CPU a message costs a
// peer's I/O thread (ZeroMQ's send and receive, the wake-ups, the bookkeeping around them),
// so that the simulator, on the calibrated machine, takes as long per iteration as the real
// reference run did.
#pragma once

#include <cstdint>

#include "node/calibration/calibration.h"
#include "node/config/experiment_config.h"

namespace fastk::node::calibration {

// The simulator's time per iteration for `config`'s peers on the calibrated machine, policy
// full, no stragglers, `iterations` iterations (the reference run's setting).
double simulated_iteration_s(const Calibration& c, const ExperimentConfig& config,
                             std::int64_t iterations);

// `c` with message_s (and latency_s = max(0, one_way_s - 2 message_s): the round trip's one
// way includes both ends' handling) chosen so that simulated_iteration_s matches
// `measured_iteration_s`. When even free messages simulate slower than measured, message_s
// is 0 (the report shows the gap).
Calibration fit_messages(Calibration c, const ExperimentConfig& config, std::int64_t iterations,
                         double measured_iteration_s, double one_way_s);

}  // namespace fastk::node::calibration
