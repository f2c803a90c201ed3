// Aggregation "median" (docs/protocol.md §4.7): each coordinate of the mix is the median of
// that coordinate over the own model and the used neighbours' models (the mean of the two
// middle values for an even count), then the step as in weighted averaging. Robust to a
// minority of outlying models, however far off: with the own model and d neighbours, fewer
// than half of the d + 1 values moved by any amount move the median only within the range of
// the others. Weighted averaging mixes in one such value at its full weight.
#include <algorithm>

#include "consensus/variants/plain_gossip.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

class CoordinateMedian final : public PlainGossip {
 public:
  using PlainGossip::PlainGossip;

  void mix(double, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    std::vector<std::span<const float>> models = used_models(plan, record);
    const std::size_t count = models.size() + 1;
    // Each model's share of the median's input, for the record (a median has no weights).
    const double share = 1.0 / static_cast<double>(count);
    record.self_weight = share;
    record.used_weights.assign(models.size(), share);
    record.terms_mixed = static_cast<int>(models.size());
    const std::span<const float> gradient = step();
    const auto lr = static_cast<float>(core_.learning_rate());
    const std::span<const float> mine = own();
    values_.resize(count);
    for (std::size_t p = 0; p < next.size(); ++p) {
      values_[0] = mine[p];
      for (std::size_t m = 0; m < models.size(); ++m) values_[m + 1] = models[m][p];
      const float median = middle(values_);
      next[p] = gradient.empty() ? median : median - lr * gradient[p];
    }
    observe_disagreement(plan, models);
    done();
  }

 private:
  // The median of `v` (reordered): its middle value, or the mean of the two middle ones.
  static float middle(std::vector<float>& v) {
    const auto half = static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), v.begin() + half, v.end());
    const float upper = v[static_cast<std::size_t>(half)];
    if (v.size() % 2 == 1) return upper;
    const float lower = *std::max_element(v.begin(), v.begin() + half);
    return lower + (upper - lower) / 2;
  }

  std::vector<float> values_;  // one coordinate's values, reused
};

}  // namespace

std::unique_ptr<MixingVariant> make_coordinate_median(IterationCore& core) {
  return std::make_unique<CoordinateMedian>(core);
}

}  // namespace fastk::consensus
