// The mixing variants (mixing_variant.h), one file each in this folder, and the aggregation
// rules users choose by name. Adding a variant: its file here, its entry below, its test,
// its section in the docs (docs/design.md "Adding a mixing variant").
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "consensus/iteration_core.h"
#include "consensus/mixing_variant.h"

namespace fastk::consensus {

// Each throws std::invalid_argument for a config it cannot run, naming the option to drop.
std::unique_ptr<MixingVariant> make_weighted_average(IterationCore& core);
std::unique_ptr<MixingVariant> make_push_sum(IterationCore& core);
std::unique_ptr<MixingVariant> make_pairwise_averaging(IterationCore& core);
std::unique_ptr<MixingVariant> make_compressed_gossip(IterationCore& core);
std::unique_ptr<MixingVariant> make_coded_neighbourhood(IterationCore& core);

// A forging attacker ([attack], consensus/attack.h) around the variant an honest peer runs.
std::unique_ptr<MixingVariant> make_byzantine(IterationCore& core,
                                              std::unique_ptr<MixingVariant> honest);

// Score-based validation ([consensus] validate, validated.cc) around an aggregation rule.
std::unique_ptr<MixingVariant> make_validated(IterationCore& core,
                                              std::unique_ptr<MixingVariant> rule);
// The same test scored from the peer's gradient (validation_score = "first_order",
// first_order_validated.cc).
std::unique_ptr<MixingVariant> make_first_order_validated(IterationCore& core,
                                                          std::unique_ptr<MixingVariant> rule);

// Local steps ([consensus] local_steps, local_steps.cc) around the variant that gossips.
std::unique_ptr<MixingVariant> make_local_steps(IterationCore& core,
                                                std::unique_ptr<MixingVariant> gossip);

// The aggregation rules of plain gossip, by the name [consensus] aggregation gives them.
std::unique_ptr<MixingVariant> make_coordinate_median(IterationCore& core);
std::unique_ptr<MixingVariant> make_trimmed_mean(IterationCore& core);
std::unique_ptr<MixingVariant> make_clipped_gossip(IterationCore& core);

// Why clipped_gossip cannot run on a peer with `degree` neighbours (over all rounds): with an
// adaptive radius it needs more than faulty_neighbours; nullopt when it can.
std::optional<std::string> unfit_for_clipped_gossip(const ProtocolConfig& config, PeerId peer,
                                                    int degree);

struct Aggregation {
  const char* name;
  std::unique_ptr<MixingVariant> (*make)(IterationCore& core);
  const char* what;  // one line, for the config's error and the docs
};
inline constexpr Aggregation kAggregations[] = {
    {"mean", make_weighted_average, "the weighted average of the used models (the default)"},
    {"median", make_coordinate_median,
     "the coordinate-wise median of the own and the used models (robust to a minority of "
     "outliers)"},
    {"trimmed_mean", make_trimmed_mean,
     "per coordinate, the mean of the own and the used models without the faulty_neighbours "
     "largest and smallest values"},
    {"clipped_gossip", make_clipped_gossip,
     "self-centred clipping: the weighted sum of the neighbours' differences, each clipped to "
     "a radius that bounds the faulty_neighbours farthest (He, Karimireddy and Jaggi 2022)"},
};

}  // namespace fastk::consensus
