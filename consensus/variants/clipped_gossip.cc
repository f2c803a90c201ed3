// Aggregation "clipped_gossip" (docs/protocol.md §4.7): self-centred clipping, He,
// Karimireddy and Jaggi, "Byzantine-robust decentralized learning via ClippedGossip" (2022).
// The peer moves from its own model by the weighted sum of its used neighbours' differences,
// each clipped to a radius tau:
//
//   x_i(k+1) = x_i + sum_{j in S} w_ij clip(x_j - x_i, tau),  clip(v, tau) = v min(1, tau/|v|)
//
// then steps as weighted averaging does. tau is chosen adaptively, as in the paper's
// experiments: so that the neighbours clipped are those that may be faulty. With b =
// consensus.faulty_neighbours, tau is the (b + 1)-th largest distance |x_j - x_i| among the
// used neighbours: the b farthest are pulled in to the distance of the nearest of the rest,
// the others mix as under "mean". With b or fewer used neighbours (a backup policy that waited
// for few, a graph whose rounds have one neighbour each) the used ones cannot set a radius by
// themselves: the models the other neighbours were last mixed with count too, so the peer
// still mixes; only with b or fewer neighbours ever mixed is tau 0
// (the local step alone). A peer with b or fewer neighbours in the graph could never mix: the
// config is refused (unfit_for_clipped_gossip). A neighbour's model, however far off, moves
// the peer by at most w_ij tau: as far as an honest neighbour could.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "consensus/disagreement.h"
#include "consensus/mix_step.h"
#include "consensus/variants/plain_gossip.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

class ClippedGossip final : public PlainGossip {
 public:
  explicit ClippedGossip(IterationCore& core)
      : PlainGossip(core), last_mixed_(core.slots().size()) {
    const auto degree = static_cast<int>(core.neighbours().size());
    if (const auto why = unfit_for_clipped_gossip(core.config(), core.self(), degree)) {
      throw std::invalid_argument(*why);
    }
  }

  void mix(double, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    std::vector<MixTerm> terms = weighted_terms(core_, plan.used, record);
    const std::span<const float> mine = own();
    std::vector<double> distance(terms.size());
    for (std::size_t t = 0; t < terms.size(); ++t) {
      distance[t] = distance_between(terms[t].model, mine);
    }
    const double tau = radius(plan, distance);
    for (const int r : plan.used) {
      const int s = core_.round_slots()[static_cast<std::size_t>(r)];
      last_mixed_[static_cast<std::size_t>(s)] = core_.mixed(core_.slot(s));
    }
    // x_i + sum_j w_ij s_j (x_j - x_i) is the weighted mix with weights w_ij s_j and the own
    // model the rest: the vectorised kernel of weighted averaging computes it. The record gives
    // the neighbours these clipped weights.
    std::vector<std::span<const float>> models;
    double self_weight = 1.0;
    for (std::size_t t = 0; t < terms.size(); ++t) {
      models.push_back(terms[t].model);
      const double scale = distance[t] > tau ? tau / distance[t] : 1.0;
      record.used_weights[t] = terms[t].weight * scale;
      terms[t].weight = static_cast<float>(record.used_weights[t]);
      self_weight -= record.used_weights[t];
    }
    record.self_weight = self_weight;
    record.terms_mixed = static_cast<int>(terms.size());
    mix_and_step(next, static_cast<float>(self_weight), mine, terms,
                 static_cast<float>(core_.learning_rate()), step());
    // The policy's disagreement over the neighbours mixed as they are: a clipped one would
    // make it as large as the attacker likes, and the peer wait for fewer.
    std::vector<std::span<const float>> unclipped;
    for (std::size_t t = 0; t < models.size(); ++t) {
      if (distance[t] <= tau) unclipped.push_back(models[t]);
    }
    observe_disagreement(plan, unclipped);
    done();
  }

 private:
  // The fixed radius if given; else the (b + 1)-th largest of the used neighbours' distances,
  // or with b or fewer of them, of those and the model each other neighbour was last mixed
  // with (0 when there are b or fewer of those too). The model last mixed, not the newest, and
  // whether or not its sender has left since: under policy full both are the same in both
  // runtimes (the newest model and when a finished neighbour's goodbye comes depend on timing).
  double radius(const UpdatePlan& plan, std::vector<double> distance) const {
    if (core_.config().clipping_radius > 0) return core_.config().clipping_radius;
    const auto faulty = static_cast<std::size_t>(core_.config().faulty_neighbours);
    if (distance.size() <= faulty && !distance.empty()) {
      std::vector<int> used_slots;
      for (const int r : plan.used)
        used_slots.push_back(core_.round_slots()[static_cast<std::size_t>(r)]);
      for (int s = 0; s < static_cast<int>(core_.slots().size()); ++s) {
        const Params& last = last_mixed_[static_cast<std::size_t>(s)];
        if (!last || core_.slot(s).parted ||
            std::find(used_slots.begin(), used_slots.end(), s) != used_slots.end()) {
          continue;
        }
        distance.push_back(distance_between(last->values(), own()));
      }
    }
    if (distance.size() <= faulty) return 0.0;
    std::nth_element(distance.begin(), distance.begin() + static_cast<std::ptrdiff_t>(faulty),
                     distance.end(), std::greater<>());
    return distance[faulty];
  }

  std::vector<Params> last_mixed_;  // per slot: the model the last update that used it mixed
};

}  // namespace

std::optional<std::string> unfit_for_clipped_gossip(const ProtocolConfig& config, PeerId peer,
                                                    int degree) {
  if (config.clipping_radius > 0 || degree > config.faulty_neighbours) return std::nullopt;
  return "consensus.aggregation = \"clipped_gossip\" measures its radius past the " +
         std::to_string(config.faulty_neighbours) +
         " farthest neighbours (consensus.faulty_neighbours), but peer " + std::to_string(peer) +
         " has " + std::to_string(degree) +
         ": it would never mix. Lower faulty_neighbours, set consensus.clipping_radius, or "
         "use a denser graph";
}

std::unique_ptr<MixingVariant> make_clipped_gossip(IterationCore& core) {
  return std::make_unique<ClippedGossip>(core);
}

}  // namespace fastk::consensus
