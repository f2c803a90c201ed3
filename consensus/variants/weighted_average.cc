// Weighted averaging over the used subset (docs/protocol.md §2-§4), aggregation "mean": the
// peer mixes the fresh models the backup policy waited for with the subset row of its mixing
// weights (consensus.renormalisation), and steps with its gradient before
// (adapt-then-combine) or after (combine-then-adapt) the mix.
#include "consensus/mix_step.h"
#include "consensus/variants/plain_gossip.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

class WeightedAverage final : public PlainGossip {
 public:
  using PlainGossip::PlainGossip;

  void mix(double, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    const std::vector<MixTerm> terms = weighted_terms(core_, plan.used, record);
    record.terms_mixed = static_cast<int>(terms.size());
    const std::span<const float> gradient = step();
    mix_and_step(next, static_cast<float>(record.self_weight), own(), terms,
                 static_cast<float>(core_.learning_rate()), gradient);
    std::vector<std::span<const float>> models;
    for (const MixTerm& term : terms) models.push_back(term.model);
    observe_disagreement(plan, models);
    done();
  }
};

}  // namespace

std::unique_ptr<MixingVariant> make_weighted_average(IterationCore& core) {
  return std::make_unique<WeightedAverage>(core);
}

}  // namespace fastk::consensus
