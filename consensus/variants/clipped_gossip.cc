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
// the others mix as under "mean". With b or fewer used neighbours there is nobody to measure
// a radius by, and tau = 0: the peer takes its local step only. A neighbour's model, however
// far off, then moves the peer by at most w_ij tau: as far as an honest neighbour could.
#include <algorithm>
#include <cmath>

#include "consensus/mix_step.h"
#include "consensus/variants/plain_gossip.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

class ClippedGossip final : public PlainGossip {
 public:
  using PlainGossip::PlainGossip;

  void mix(double, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    std::vector<MixTerm> terms = weighted_terms(core_, plan.used, record);
    const std::span<const float> mine = own();
    std::vector<double> distance(terms.size());
    for (std::size_t t = 0; t < terms.size(); ++t) {
      distance[t] = norm_of_difference(terms[t].model, mine);
    }
    const double tau = radius(distance);
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
    observe_disagreement(plan, models);
    done();
  }

 private:
  // |a - b|, in double, summed in four interleaved partial sums (a fixed order, so the same
  // bits in every runtime) so that the additions do not wait on each other.
  static double norm_of_difference(std::span<const float> a, std::span<const float> b) {
    double sum[4] = {0, 0, 0, 0};
    std::size_t p = 0;
    for (; p + 4 <= a.size(); p += 4) {
      for (std::size_t l = 0; l < 4; ++l) {
        const double d = static_cast<double>(a[p + l]) - static_cast<double>(b[p + l]);
        sum[l] += d * d;
      }
    }
    for (; p < a.size(); ++p) {
      const double d = static_cast<double>(a[p]) - static_cast<double>(b[p]);
      sum[0] += d * d;
    }
    return std::sqrt((sum[0] + sum[1]) + (sum[2] + sum[3]));
  }

  // The fixed radius if given; else the (b + 1)-th largest of the distances, 0 when there
  // are b or fewer.
  double radius(std::vector<double> distance) const {
    if (core_.config().clipping_radius > 0) return core_.config().clipping_radius;
    const auto faulty = static_cast<std::size_t>(core_.config().faulty_neighbours);
    if (distance.size() <= faulty) return 0.0;
    std::sort(distance.begin(), distance.end(), std::greater<>());
    return distance[faulty];
  }
};

}  // namespace

std::unique_ptr<MixingVariant> make_clipped_gossip(IterationCore& core) {
  return std::make_unique<ClippedGossip>(core);
}

}  // namespace fastk::consensus
