// The measurements behind a calibration (calibration.h), each alone on the calling thread:
// medians of repeated timings, so a stray preemption does not move them.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "compression/compressor.h"
#include "node/config/experiment_config.h"
#include "node/training/peer_trainer.h"

namespace fastk::node::measure {

// One gradient of the config's model at its batch size, plain and with the adaptive policy's
// noise estimate, on peer 0's shard (loads the data set).
struct GradientMeasurement {
  double plain_s = 0;
  double with_noise_s = 0;
  std::size_t parameters = 0;
  // One sample's forward pass and loss, over a batch of [consensus] validation_batch.
  double loss_per_sample_s = 0;
};
GradientMeasurement measure_gradients(const ExperimentConfig& config, int repeats);

// The update of a model of `parameters` floats mixing 1..4 neighbour models: a least-squares
// line through the medians, base + per_term * terms. And the adaptive policy's disagreement
// estimate, per model.
struct UpdateTimes {
  double base_s = 0;
  double per_term_s = 0;
  double disagreement_per_term_s = 0;
  double direction_s = 0;  // the local step's direction pass (see measure_update)
};
// direction_s: the local step's direction pass (learning::Sgd::direction, docs/protocol.md
// §3.7) that peers with momentum or weight decay pay every update, timed with `optimizer`,
// or with momentum 0.9 when it has neither.
UpdateTimes measure_update(std::size_t parameters, int repeats,
                           const learning::OptimizerSpec& optimizer = {});

// Compressed gossip's work on a model of `parameters` floats, for every compressor kind with
// the parameters of `base` (chunk, levels, fraction): the owner's step of its public estimate
// (PublicEstimate::advance) and a neighbour's (apply), keyed by compression::to_string.
struct CompressionTimes {
  double compress_s = 0;
  double apply_s = 0;
};
std::map<std::string, CompressionTimes> measure_compression(std::size_t parameters,
                                                            const compression::CompressorSpec& base,
                                                            int repeats);

// The adaptive policy's decide() for `neighbours` neighbours with a full arrival window.
double measure_adaptive_decision(int neighbours, int repeats);

// Half the round trip of a message between two ZeroMQ transports of this process on this
// machine's transport ("shm" sends a small reference, "ipc" and "tcp" a model of
// `parameters` floats), two threads answering each other. Includes both ends' handling, and
// with `curve` the encryption a run over TCP pays (docs/security.md).
double measure_message_round_trip_s(const std::string& local_transport, bool curve,
                                    std::size_t parameters, int repeats);

}  // namespace fastk::node::measure
