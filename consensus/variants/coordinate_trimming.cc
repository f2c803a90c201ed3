// Aggregations "median" and "trimmed_mean" (docs/protocol.md §4.7): each coordinate of the mix
// is the mean of that coordinate over the own model and the used neighbours' models without
// its `trim` largest and `trim` smallest values, then the step as in weighted averaging.
//
// - trimmed_mean trims b = consensus.faulty_neighbours from each end (fewer when there are not
//   2b + 1 values: one is always kept). Up to b outlying models, however far off, are trimmed
//   away or bounded by honest values, and the honest values kept are averaged.
// - median trims all but the middle one or two: (count - 1) / 2 from each end. Fewer than half
//   of the values moved, by any amount, move it only within the range of the others.
//
// Weighted averaging mixes in one such value at its full weight.
#include <algorithm>

#include "consensus/variants/plain_gossip.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

class CoordinateTrimming final : public PlainGossip {
 public:
  // How many values to trim from each end, of `count` values.
  using TrimRule = std::size_t (*)(std::size_t count, const ProtocolConfig& config);

  CoordinateTrimming(IterationCore& core, TrimRule trim_of)
      : PlainGossip(core), trim_of_(trim_of) {}

  void mix(double, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    std::vector<std::span<const float>> models = used_models(plan, record);
    const std::size_t count = models.size() + 1;
    const std::size_t trim = std::min(trim_of_(count, core_.config()), (count - 1) / 2);
    // Each model's share of the rule's input, for the record (the rule has no weights).
    const double share = 1.0 / static_cast<double>(count);
    record.self_weight = share;
    record.used_weights.assign(models.size(), share);
    record.terms_mixed = static_cast<int>(models.size());
    const std::span<const float> gradient = step();
    const auto lr = static_cast<float>(core_.learning_rate());
    const std::span<const float> mine = own();
    // The counts a sparse graph and a backup policy mix most often, without sorting (the
    // same values the sort gives: one or two values kept, and a double sum of two does not
    // depend on their order).
    if (count <= 2) {
      mean_of_up_to_two(mine, models, next);
    } else if (count == 3 && trim == 1) {
      median_of_three(mine, models[0], models[1], next);
    } else {
      values_.resize(count);
      for (std::size_t p = 0; p < next.size(); ++p) {
        values_[0] = mine[p];
        for (std::size_t m = 0; m < models.size(); ++m) values_[m + 1] = models[m][p];
        next[p] = trimmed_mean(values_, trim);
      }
    }
    if (!gradient.empty()) {
      for (std::size_t p = 0; p < next.size(); ++p) next[p] -= lr * gradient[p];
    }
    observe_disagreement(plan, std::move(models),
                         static_cast<std::size_t>(core_.config().faulty_neighbours));
    done();
  }

 private:
  // next = a, or the mean of a and the one model (in double, rounded once).
  static void mean_of_up_to_two(std::span<const float> a,
                                const std::vector<std::span<const float>>& models,
                                std::span<float> next) {
    if (models.empty()) {
      std::copy(a.begin(), a.end(), next.begin());
      return;
    }
    const std::span<const float> b = models[0];
    for (std::size_t p = 0; p < next.size(); ++p) {
      next[p] = static_cast<float>((static_cast<double>(a[p]) + static_cast<double>(b[p])) / 2);
    }
  }

  // next = median(a, b, c) per coordinate: max(min(a, b), min(max(a, b), c)) is the middle
  // value for any order of a, b and c.
  static void median_of_three(std::span<const float> a, std::span<const float> b,
                              std::span<const float> c, std::span<float> next) {
    for (std::size_t p = 0; p < next.size(); ++p) {
      const float low = std::min(a[p], b[p]), high = std::max(a[p], b[p]);
      next[p] = std::max(low, std::min(high, c[p]));
    }
  }

  // The mean of `v` (reordered) without its `trim` smallest and `trim` largest values, summed
  // in ascending order so that the result does not depend on the order models arrived in.
  static float trimmed_mean(std::vector<float>& v, std::size_t trim) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (std::size_t i = trim; i < v.size() - trim; ++i) sum += v[i];
    return static_cast<float>(sum / static_cast<double>(v.size() - 2 * trim));
  }

  TrimRule trim_of_;
  std::vector<float> values_;  // one coordinate's values, reused
};

}  // namespace

std::unique_ptr<MixingVariant> make_coordinate_median(IterationCore& core) {
  return std::make_unique<CoordinateTrimming>(
      core, [](std::size_t count, const ProtocolConfig&) { return (count - 1) / 2; });
}

std::unique_ptr<MixingVariant> make_trimmed_mean(IterationCore& core) {
  return std::make_unique<CoordinateTrimming>(core, [](std::size_t, const ProtocolConfig& c) {
    return static_cast<std::size_t>(c.faulty_neighbours);
  });
}

}  // namespace fastk::consensus
