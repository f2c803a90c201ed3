// The settings of one peer's protocol (docs/protocol.md §2-§6): what the config's
// [consensus], [optimizer], [coding] and [compression] give PeerProtocol.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coding/neighbourhood_code.h"
#include "compression/compressor.h"
#include "compression/error_reset.h"
#include "consensus/attack.h"
#include "consensus/backup_policy.h"
#include "consensus/mixing_weights.h"
#include "learning/sgd.h"
#include "topology/schedule.h"

namespace fastk::consensus {

enum class UpdateOrder { kCombineThenAdapt, kAdaptThenCombine };
// "combine_then_adapt", "adapt_then_combine"; throws std::invalid_argument otherwise.
UpdateOrder parse_update_order(const std::string& name);
std::string to_string(UpdateOrder order);

// How [consensus] validate scores a model (docs/protocol.md §4.9).
enum class ValidationScore { kLoss, kFirstOrder };
// "loss", "first_order"; throws std::invalid_argument otherwise.
ValidationScore parse_validation_score(const std::string& name);
std::string to_string(ValidationScore score);
// Zeno's rho unless the config sets one: the first-order estimate holds near the own model
// only, so its penalty must outweigh it for a model far off (a sign-flipped one) where the
// loss scorer sees the loss itself (docs/protocol.md §4.9 has the runs behind both).
constexpr double default_validation_penalty(ValidationScore score) {
  switch (score) {
    case ValidationScore::kLoss:
      return 1e-3;
    case ValidationScore::kFirstOrder:
      return 1e-2;
  }
  return 1e-2;
}

struct ProtocolConfig {
  std::int64_t iterations = 1000;  // the peer finishes after this many updates
  // The local step (docs/protocol.md §3.7): the learning rate and its warm-up and schedule
  // (over `iterations`), momentum on this peer's own gradients, weight decay. Each peer keeps
  // its own momentum; only models are mixed. batch_size and seed are the runtime's.
  learning::OptimizerSpec optimizer{.lr = 0.1};
  UpdateOrder order = UpdateOrder::kCombineThenAdapt;
  Renormalisation renormalisation = Renormalisation::kReturnToSelf;
  int m_min = 1;      // never await fewer (capped at the neighbours available)
  int staleness = 0;  // accept tags >= k - staleness
  int max_gap = 0;    // G_max; 0 = no gap bound
  // H: gossip on every H-th iteration, local SGD steps in between (variants/local_steps.cc).
  int local_steps = 1;
  double silence_timeout_s = 0;  // 0 = a silent neighbour is awaited forever
  PolicySpec policy;
  // Always wait for the neighbours of the graph's spanning tree (topology/spanning_tree.h),
  // whatever the policy decides; the policy chooses among the other neighbours. Every
  // iteration's used edges then connect all peers (docs/protocol.md §5.8). Static graphs only.
  bool keep_connected = false;
  // Push-sum (stochastic gradient push, docs/protocol.md §4.4): the model carries a weight
  // w (one more value, 1 at the start) mixed with the same column-stochastic weights; the
  // gradient is taken at x / w, and every message's mass is added once, late or not.
  // Needs a schedule of period 1; not with coding.
  bool push_sum = false;
  // Coded neighbourhoods (scheme != none): the peer waits until its neighbourhood's gradient
  // decodes (or coding.deadline_s after its own gradient) instead of asking the policy, then
  // steps with the decoded mean gradient; the model goes out with the coded gradients.
  coding::NeighbourhoodCodeSpec coding;
  // Policy ad_psgd: the seed of each active peer's draw of its averaging partner; compressed
  // gossip: the seed of its random rounding and sparsification.
  std::uint64_t seed = 0;
  // Compressed gossip (CHOCO-SGD, docs/compression.md): with a compressor the peer sends the
  // compressed difference to its public estimate instead of its model, and mixes the
  // estimates with this consensus step (gamma, in (0, 1]). Needs adapt_then_combine.
  std::optional<compression::CompressorSpec> compression;
  double consensus_step = 1.0;
  // Error reset (compression/error_reset.h): every reset.every-th gossip sends its difference
  // with reset.spec and mixes with reset.consensus_step. Needs compression.
  std::optional<compression::ErrorReset> error_reset;
  // How plain gossip combines the own model with the used neighbours' (consensus/variants/,
  // variants.h kAggregations): "mean" (the subset row of the mixing weights) or a robust
  // rule. Not with push_sum, compression, coding or ad_psgd, which mix in their own way.
  std::string aggregation = "mean";
  // How many of a peer's neighbours the robust rules assume may be faulty: trimmed_mean trims
  // this many values from each end, clipped_gossip clips this many neighbours (§4.7).
  int faulty_neighbours = 1;
  // clipped_gossip's radius tau: 0 chooses it every update from the neighbours' distances (the
  // (faulty_neighbours + 1)-th largest); > 0 fixes it, as in the paper's runs with a given tau.
  double clipping_radius = 0;
  // Score-based validation (docs/protocol.md §4.9): before an update the peer scores each
  // model it would mix by the loss change it would bring and leaves out those whose score
  // L(own) - L(x_j) - validation_penalty * |x_j - own|^2 is below -validation_margin. Plain
  // gossip only.
  bool validate = false;
  // How the loss change is scored: estimated from the peer's gradient, <g, x_i - x_j>
  // (kFirstOrder, variants/first_order_validated.cc), or by losses on validation_batch
  // samples (kLoss, variants/validated.cc).
  ValidationScore validation_score = ValidationScore::kFirstOrder;
  int validation_batch = 32;
  double validation_margin = 0.1;
  double validation_penalty = default_validation_penalty(ValidationScore::kFirstOrder);  // rho
  // [attack]: the peers that misbehave, and how (consensus/attack.h). Plain gossip only.
  std::optional<AttackSpec> attack;
};

}  // namespace fastk::consensus
