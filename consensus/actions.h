// What the peer protocol asks its runtime to do, and the per-iteration record that makes
// every decision observable. The runtime (simulator, ZeroMQ peer, test loop) executes the
// actions in order.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <variant>
#include <vector>

#include "compression/compressed.h"
#include "consensus/backup_policy.h"
#include "consensus/coded_message.h"
#include "consensus/params.h"
#include "topology/graph.h"

namespace fastk::consensus {

// Send `params` with iteration tag `tag` to every peer in `to`.
struct SendParams {
  std::vector<PeerId> to;
  std::int64_t tag = 0;
  Params params;
};

// Send a coded gradient with tag `tag` to one neighbour (coded neighbourhoods: each
// neighbour gets its own combination). It follows the SendParams of the same tag, on the
// same link, so it arrives after that model.
struct SendCoded {
  PeerId to = 0;
  std::int64_t tag = 0;
  CodedPart coded;
};

// Compressed gossip (docs/compression.md): the sender's compressed difference q(tag) to its
// public estimate, to every peer in `to`. Receivers apply each one once, in tag order.
using CompressedPart = std::shared_ptr<const compression::Compressed>;
struct SendCompressed {
  std::vector<PeerId> to;
  std::int64_t tag = 0;
  CompressedPart difference;
};

// AD-PSGD's pairwise averages (policy ad_psgd, docs/protocol.md §4.5). An active peer sends
// a kRequest with its model x_i and its iteration as `tag`; the passive neighbour j answers
// with a kReply of the same tag carrying r = (x_j - x_i) / 2, having set x_j -= r, and the
// active peer adds r: both hold (x_i + x_j) / 2 and the sum of the models is unchanged. A
// kReply without params declines (the neighbour has finished or stopped): nothing changes.
enum class AveragingStep { kRequest, kReply };
struct SendAveraging {
  PeerId to = 0;
  AveragingStep step = AveragingStep::kRequest;
  std::int64_t tag = 0;
  Params params;  // null: a declined request
};

// Compute the local mini-batch gradient at `params` and report it as a GradientDone input
// (inputs.h). Coded neighbourhoods list `partitions`: one mean gradient per listed partition (home
// shard of that peer), concatenated in this order; the own shard comes first.
struct StartGradient {
  std::int64_t iteration = 0;
  Params params;
  std::vector<PeerId> partitions;  // empty: the own shard only
  bool split_batch = true;         // spread one mini-batch over the partitions
  double work = 1;                 // compute relative to one uncoded gradient (simulated time)
  bool gradient_stats = false;     // also GradientStats, for the policy (own shard only)
};

// Score validation (ProtocolConfig::validate): the mean loss of each of `models` (the own
// model and the neighbours' the update would mix, those not scored yet this iteration) on
// the same `batch` samples of the peer's own shard, drawn for `iteration` (node/training:
// validation_positions). Reported as a ValidationDone input with the losses in this order.
// Only asked while no gradient is in flight.
struct StartValidation {
  std::int64_t iteration = 0;
  std::vector<Params> models;
  int batch = 0;
};

// Hand the protocol a TimerFired at (or after) `at_s`. Timers only prompt a re-evaluation: a late,
// early or duplicate call is harmless, so runtimes need not cancel superseded timers.
struct ArmTimer {
  double at_s = 0;
};

// Everything about one finished iteration of one peer.
// One neighbour of one iteration (neighbours.csv; docs/protocol.md §7.2): when its message
// came, whether it was mixed, how old the model was, and how much it sent.
struct NeighbourRecord {
  PeerId neighbour = 0;
  // Arrival of its first message with tag >= k, relative to the own gradient's end (negative:
  // before it; a fresh message already there when k began counts at the start); NaN: none
  // with tag >= k by the update.
  double arrival_s = std::numeric_limits<double>::quiet_NaN();
  bool used = false;
  // k minus the tag of the model mixed (used), or of its newest message: positive, that many
  // iterations old; negative, from a neighbour ahead. NaN: nothing received yet.
  double tag_lag = std::numeric_limits<double>::quiet_NaN();
  // Payload bytes (model and coded-gradient values) of the messages newer than any before
  // it that the protocol took from it since the last update that listed it: the same in both
  // runtimes, not the bytes on the wire.
  std::int64_t bytes = 0;
};

struct IterationRecord {
  PeerId peer = 0;
  std::int64_t iteration = 0;  // k: the update produced x(k+1)
  int neighbours = 0;          // d: receive_from of round k
  int awaitable = 0;           // neighbours not known to be gone when k began
  // The three counts every output names the same way (docs/protocol.md §7.1):
  //   awaited  m, how many fresh neighbours the policy decided to wait for;
  //   used     |S|, how many neighbour models the update actually mixed (>= required);
  //   backups  d - m, the neighbours the policy decided not to wait for.
  int awaited = 0;
  int required = 0;          // fresh count the update waited for (deadline relaxes m)
  int backups = 0;           // d - awaited
  std::vector<PeerId> used;  // S, in receive_from order
  std::vector<std::int64_t> used_tags;
  std::vector<double> used_weights;  // w_ij for j in S
  double self_weight = 1.0;          // w_ii
  int terms_mixed = 0;      // vectors the mix read besides the own model (what the update costs)
  int rejected = 0;         // neighbours' models validation left out (ProtocolConfig::validate)
  double validation_s = 0;  // of update_s - gradient_done_s, the time losses were computed
  double start_s = 0;       // t(k): iteration began (model sent in CTA)
  double gradient_done_s = 0;
  double update_s = 0;  // mixing step applied
  EstimatorValues estimates;
  // Coded neighbourhoods ([coding]); partitions_computed = 0 when coding is off.
  int partitions_computed = 0;  // partition gradients computed this iteration
  bool decodable = false;       // every block covered when the peer stepped
  int coded_members = 0;        // coded gradients the decode combined (own included)
  double decode_residual = 0;   // max_j |alpha_j - 1| of the decode
  std::vector<NeighbourRecord> neighbour_records;  // one per receive_from of round k
  // Waiting for neighbours: from the own gradient's end to the update, less validation.
  double wait_s() const { return update_s - gradient_done_s - validation_s; }
};

struct IterationCompleted {
  IterationRecord record;
};

// A neighbour stopped being awaited: it said goodbye (NeighbourLeft) or was silent for
// silence_timeout_s. Reported once per departure, by the first event that sees it; a message
// from the neighbour brings it back, and a later departure is reported again. The runtime
// keeps no rule of its own for this: the departures it lists are these.
struct NeighbourGone {
  PeerId peer = 0;
  std::int64_t iteration = 0;  // the own iteration when it was noticed
  bool said_goodbye = false;   // false: silent
  // Compressed gossip: a difference of it was lost (a gap in its tags), so this peer's copy of
  // its estimate has parted from the others' for good; it is mixed and awaited no more.
  bool lost_difference = false;
};

// The peer ran its configured number of iterations; model() is final.
struct Finished {
  std::int64_t iterations = 0;
};

using Action = std::variant<SendParams, SendCoded, SendAveraging, SendCompressed, StartGradient,
                            StartValidation, ArmTimer, IterationCompleted, NeighbourGone, Finished>;
using Actions = std::vector<Action>;

// One handler per action, for std::visit: a runtime that lacks a handler for a new action
// does not compile, where a chain of get_if would drop the action silently.
template <typename... Handlers>
struct ActionHandlers : Handlers... {
  using Handlers::operator()...;
};
// Clang before 17 does not deduce aggregate template arguments by itself.
template <typename... Handlers>
ActionHandlers(Handlers...) -> ActionHandlers<Handlers...>;

}  // namespace fastk::consensus
