// What running the peers costs on real machines, for the simulator: CPU seconds of the work a
// real peer does besides waiting, and which peers share which cores. Measured on a machine by
// `fastk calibrate` (node/calibration/); the default (all zero, unlimited cores) is the
// abstract simulator, where only the delay model's compute and link times pass.
//
// A simulated peer, like a real one, has a compute thread (its gradients) and an I/O thread
// (messages in and out, and the update). Both run on the peer's group of cores, shared with
// the other peers bound to it by processor sharing (simulation/cpu_pool.h).
#pragma once

#include <optional>
#include <vector>

#include "compression/compressed.h"

namespace fastk::simulation {

struct MachineCosts {
  // CPU seconds of one plain gradient. 0: the whole compute time is CPU work. It is also
  // what the delay model's slowdowns multiply: a gradient whose compute time is f times it
  // sleeps (f - 1) times it after its CPU work, using no CPU, as real peers do.
  double gradient_cpu_s = 0;
  // CPU seconds of a gradient that also yields GradientStats (StartGradient::gradient_stats,
  // the adaptive policy's noise estimate): a little more. 0: gradient_cpu_s. Used only on a
  // measured machine (gradient_cpu_s > 0).
  double gradient_stats_cpu_s = 0;
  // Per peer, how much longer its gradients take than the measured machine's: its host's
  // gradient time over the calibrated one, on a LAN of unlike machines (`fastk doctor
  // --hosts-json`, then `fastk calibrate --hosts`). Scales its gradients' CPU work; the sleep
  // an injected slowdown adds stays the calibrated one, as in real peers. Empty, or a peer
  // past its end: 1.
  std::vector<double> gradient_scale;
  // CPU seconds of one sample's forward pass and loss, what a validation (StartValidation:
  // every model over its batch) costs on the compute thread. 0: free (the abstract simulator).
  double loss_cpu_s_per_sample = 0;
  double receive_s = 0;          // I/O thread, per message received
  double send_s = 0;             // I/O thread, per message sent (per destination)
  double update_s = 0;           // I/O thread, per update: mixing and the step...
  double update_per_term_s = 0;  // ... plus this per vector mixed (IterationRecord::terms_mixed)
  // ... plus the backup policy's decision, charged on updates of iterations with neighbours
  // (once per gossip: not on the local steps of [consensus] local_steps, which decide
  // nothing; the decision itself is made as the next gossip begins).
  double decision_s = 0;
  double latency_s = 0;  // added to every link delay: the machine's own
  // Compressed gossip, I/O thread: the owner's step of its public estimate (difference,
  // compression, own estimate; per difference sent out) and a neighbour's (per one received).
  double compress_s = 0;
  double apply_difference_s = 0;
  // With error reset ([compression] reset_every): the same for the reset's compressor, charged
  // for each difference of its kind instead.
  std::optional<compression::Kind> reset_kind;
  double reset_compress_s = 0;
  double reset_apply_difference_s = 0;
  double compress_s_of(compression::Kind kind) const {
    return kind == reset_kind ? reset_compress_s : compress_s;
  }
  double apply_difference_s_of(compression::Kind kind) const {
    return kind == reset_kind ? reset_apply_difference_s : apply_difference_s;
  }
  // Each peer's link rate in bytes per second, in each direction (shaped_links.h); 0: links
  // take no time per byte. Not measured by a calibration: a setting ([sim] link_rate_mbit).
  double link_bytes_per_s = 0;
  // cpu_group[peer]: the group of cores the peer is bound to; group_cores[g]: its cores
  // (0: unlimited). Empty: every peer on one unlimited group.
  std::vector<int> cpu_group;
  std::vector<double> group_cores;

  bool charges_io() const {
    return receive_s > 0 || send_s > 0 || update_s > 0 || update_per_term_s > 0 || decision_s > 0 ||
           compress_s > 0 || apply_difference_s > 0 || reset_compress_s > 0 ||
           reset_apply_difference_s > 0;
  }
};

}  // namespace fastk::simulation
