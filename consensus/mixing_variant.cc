#include "consensus/mixing_variant.h"

#include <stdexcept>
#include <string>

#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

// What AD-PSGD leaves no room for: each names the option to drop.
void check_pairwise_averaging(const ProtocolConfig& config) {
  const auto refuse_with = [](const std::string& what) {
    throw std::invalid_argument("consensus.policy = \"ad_psgd\" " + what);
  };
  if (config.push_sum) {
    refuse_with("and push_sum exclude each other: AD-PSGD keeps the mean itself");
  }
  if (config.coding.scheme != coding::Scheme::kNone) {
    refuse_with("and coding exclude each other: nobody waits for a neighbourhood's gradients");
  }
  if (config.keep_connected) refuse_with("waits for no neighbour: drop keep_connected");
  if (config.max_gap > 0) refuse_with("is asynchronous: drop max_gap");
  if (config.order != UpdateOrder::kCombineThenAdapt) {
    refuse_with("averages, then steps with the gradient taken before: drop order");
  }
}

// What local steps leave no room for: each names the option to drop.
void check_local_steps(const ProtocolConfig& config, bool pairwise_averaging) {
  const auto refuse_with = [](const std::string& what) {
    throw std::invalid_argument("consensus.local_steps > 1 " + what);
  };
  if (config.push_sum) refuse_with("and push_sum exclude each other");
  if (config.coding.scheme != coding::Scheme::kNone) {
    refuse_with("and coding exclude each other: a coded gradient is one per gossip");
  }
  if (pairwise_averaging) refuse_with("and policy ad_psgd exclude each other");
  if (config.max_gap > 0) {
    refuse_with("and max_gap exclude each other: neighbours' tags advance by local_steps");
  }
  if (config.staleness >= config.local_steps) {
    refuse_with(
        "needs staleness < local_steps: the model of the previous gossip would count "
        "as fresh");
  }
}

// The variant that gossips (the only one, without local steps).
std::unique_ptr<MixingVariant> make_gossip_variant(IterationCore& core) {
  const ProtocolConfig& config = core.config();
  parse_aggregation(config.aggregation);  // an unknown name, whatever the variant
  const bool plain = !config.compression && !config.push_sum &&
                     config.coding.scheme == coding::Scheme::kNone &&
                     !core.policy().pairwise_averaging();
  if (!plain && config.attack) {
    throw std::invalid_argument(
        "[attack] is for plain gossip: push_sum, compression, coding and ad_psgd mix in their "
        "own way (docs/security.md)");
  }
  if (!plain && config.validate) {
    throw std::invalid_argument(
        "consensus.validate is for plain gossip: push_sum, compression, coding and ad_psgd mix "
        "in their own way (docs/protocol.md §4.9)");
  }
  if (!plain && config.aggregation != "mean") {
    throw std::invalid_argument("consensus.aggregation = \"" + config.aggregation +
                                "\" is a rule of plain gossip: push_sum, compression, coding "
                                "and ad_psgd mix in their own way");
  }
  if (config.push_sum && config.coding.scheme != coding::Scheme::kNone) {
    throw std::invalid_argument("push_sum and coding exclude each other");
  }
  if (config.error_reset && !config.compression) {
    throw std::invalid_argument("error reset (compression.reset_every) needs a compressor");
  }
  if (config.compression) return make_compressed_gossip(core);
  if (core.policy().pairwise_averaging()) {
    check_pairwise_averaging(config);
    return make_pairwise_averaging(core);
  }
  if (config.push_sum) return make_push_sum(core);
  if (config.coding.scheme != coding::Scheme::kNone) return make_coded_neighbourhood(core);
  for (const Aggregation& rule : kAggregations) {
    if (config.aggregation != rule.name) continue;
    std::unique_ptr<MixingVariant> variant = rule.make(core);
    if (config.attack && config.attack->forges() && config.attack->attacker(core.self())) {
      return make_byzantine(core, std::move(variant));
    }
    if (config.validate) {
      switch (config.validation_score) {
        case ValidationScore::kLoss:
          return make_validated(core, std::move(variant));
        case ValidationScore::kFirstOrder:
          return make_first_order_validated(core, std::move(variant));
      }
    }
    return variant;
  }
  throw std::logic_error("aggregation " + config.aggregation + " accepted and not found");
}

}  // namespace

// One variant per run. The options that choose one exclude each other: what excludes push-sum,
// AD-PSGD or an aggregation rule is refused here, and each variant's constructor refuses what
// else it cannot run (compressed gossip names the options it excludes).
std::unique_ptr<MixingVariant> make_mixing_variant(IterationCore& core) {
  const ProtocolConfig& config = core.config();
  if (config.local_steps > 1) {
    check_local_steps(config, core.policy().pairwise_averaging());
    return make_local_steps(core, make_gossip_variant(core));
  }
  return make_gossip_variant(core);
}

std::string parse_aggregation(const std::string& name) {
  std::string known;
  for (const Aggregation& rule : kAggregations) {
    if (name == rule.name) return name;
    known += std::string(known.empty() ? "" : ", ") + rule.name;
  }
  throw std::invalid_argument("unknown aggregation \"" + name + "\"; expected " + known);
}

bool no_validation_asked(const ValidationDone& v) {
  throw std::logic_error("the protocol got the losses of a validation it did not ask for (" +
                         std::to_string(v.iteration) + ")");
}

bool refuse(IterationCore& core, const CodedGradientArrived& m) {
  const std::size_t size =
      m.coded && m.coded->gradient ? m.coded->gradient->values().size() : core.parameters();
  const auto cause = core.unusable(m.from, m.tag, m.coded ? m.coded->gradient : nullptr, size);
  core.drops().add(cause.value_or(DropCause::kNotInTheCode));
  return false;
}

bool refuse(IterationCore& core, const DifferenceArrived& m) {
  // This run sends models, not differences.
  core.drops().add(core.slot_of(m.from) < 0 ? DropCause::kNotNeighbour : DropCause::kBadDifference);
  return false;
}

bool refuse(IterationCore& core, const AveragingArrived& m) {
  DropCause cause = DropCause::kNotAsked;
  if (core.slot_of(m.from) < 0) {
    cause = DropCause::kNotNeighbour;
  } else if (m.tag < 0 || m.tag >= core.config().iterations) {
    cause = DropCause::kTagOutOfRange;
  }
  core.drops().add(cause);
  return false;
}

}  // namespace fastk::consensus
