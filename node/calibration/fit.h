// Fitting what a calibration cannot time in isolation: the CPU a message costs a peer's I/O
// thread (ZeroMQ's hand-offs, wake-ups, the caches peers sharing a core evict from each
// other), so that the simulator, on the calibrated machine, takes as long per iteration as a
// real reference run did; and checking the result on a second real run.
#pragma once

#include <cstdint>
#include <string>

#include "node/calibration/calibration.h"
#include "node/config/experiment_config.h"
#include "node/stragglers/delay_spec.h"

namespace fastk::node::calibration {

// The straggler setting of reference run B: peer 0 always 8x slow; and the same as the
// [stragglers] table the real reference run is given (`--set stragglers=...`).
stragglers::DelaySpec reference_b_stragglers();
std::string reference_b_stragglers_toml();

// The simulator's time per iteration for `config`'s peers on the calibrated machine, policy
// full, `iterations` iterations, with `stragglers` (and nothing else of the config's).
double simulated_iteration_s(const Calibration& c, const ExperimentConfig& config,
                             std::int64_t iterations, const stragglers::DelaySpec& stragglers);

// `c` with message_s and latency_s = max(0, one_way_s - 2 message_s) (the round trip's one
// way includes both ends' handling) chosen, by bisection, so that the simulator matches
// c.reference_iteration_s (A); then reference_simulated_s and reference_b_simulated_s, the
// simulator's figures for A and for B (the check). When even free messages simulate slower
// than A measured, message_s stays 0 (the simulated figure shows the gap).
Calibration fit_costs(Calibration c, const ExperimentConfig& config, double one_way_s);

}  // namespace fastk::node::calibration
