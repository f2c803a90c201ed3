// A forging attacker ([attack], consensus/attack.h; docs/security.md "Attacks"): the variant
// of an honest peer, wrapped. What the honest variant decides about time is kept (it waits for
// its neighbours as its policy says, so it paces like an honest peer), what it mixes is not:
// the attacker trains by local SGD alone (its mix is the honest rule over no neighbour: its
// own model, then the step). Every model it sends is replaced by a forged one. ALIE reads the
// neighbours' models that an honest peer would have mixed in the last update.
#include <algorithm>
#include <cmath>
#include <limits>

#include "consensus/attack.h"
#include "consensus/variants/variants.h"
#include "consensus/variants/wrapped_variant.h"
#include "learning/random.h"

namespace fastk::consensus {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();

class Byzantine final : public WrappedVariant {
 public:
  Byzantine(IterationCore& core, std::unique_ptr<MixingVariant> honest)
      : WrappedVariant(std::move(honest)), core_(core), spec_(*core.config().attack) {}

  void begin(double now_s, Actions& out) override {
    const std::size_t from = out.size();
    inner().begin(now_s, out);
    forge(out, from);
  }
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override {
    const std::size_t from = out.size();
    auto reusable = inner().gradient_done(now_s, std::move(gradient), stats, out);
    forge(out, from);
    return reusable;
  }
  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    const std::size_t from = out.size();
    auto plan = inner().ready(now_s, out);
    forge(out, from);
    return plan;
  }
  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    // What an honest peer would have mixed, for ALIE: under policy full, each neighbour's
    // model of this iteration, the same in both runtimes (the newest received would depend
    // on timing).
    honest_models_.clear();
    for (const int r : plan.used) {
      const Slot& slot = core_.slot(core_.round_slots()[static_cast<std::size_t>(r)]);
      honest_models_.push_back(core_.mixed(slot));
    }
    inner().mix(now_s, UpdatePlan{{}, plan.required}, next, record);  // its own model only
  }

 private:
  // Replaces the model of every SendParams in out[from...] by its forgery.
  void forge(Actions& out, std::size_t from) {
    for (std::size_t a = from; a < out.size(); ++a) {
      if (auto* send = std::get_if<SendParams>(&out[a])) {
        send->params = forged(send->params->values(), send->tag);
      }
    }
  }

  Params forged(std::span<const float> x, std::int64_t tag) const {
    std::vector<float> v(x.begin(), x.end());
    const double scale = spec_.scale;
    switch (spec_.kind) {
      case AttackKind::kLarge:
        std::fill(v.begin(), v.end(), static_cast<float>(scale > 0 ? scale : 1000.0));
        break;
      case AttackKind::kSignFlip:
        for (float& value : v) value *= static_cast<float>(-(scale > 0 ? scale : 1.0));
        break;
      case AttackKind::kNoise: {
        learning::Rng rng(learning::mix64(core_.config().seed ^ learning::mix64(core_.self())) ^
                          static_cast<std::uint64_t>(tag));
        const double sd = scale > 0 ? scale : 1.0;
        for (float& value : v) value += static_cast<float>(sd * rng.normal());
        break;
      }
      case AttackKind::kAlie:
        little_is_enough(v);
        break;
      case AttackKind::kLabelFlip:
        break;  // not forged: make_byzantine is not asked for it
    }
    // A forgery receivers can read: one that overflowed would be dropped unread (and [attack]
    // bounds the scale so that only a diverged own model gets here).
    for (float& value : v) {
      if (!std::isfinite(value)) value = std::signbit(value) ? -kFloatMax : kFloatMax;
    }
    return make_params(std::move(v));
  }

  // Per coordinate, mean - z * sd over the neighbours' models of the last update; the own
  // model before the first.
  void little_is_enough(std::vector<float>& v) const {
    if (honest_models_.empty()) return;
    const double z = spec_.scale > 0 ? spec_.scale : alie_z(static_cast<int>(core_.slots().size()));
    const auto count = static_cast<double>(honest_models_.size());
    for (std::size_t p = 0; p < v.size(); ++p) {
      double sum = 0, squares = 0;
      for (const Params& model : honest_models_) {
        const double value = model->values()[p];
        sum += value;
        squares += value * value;
      }
      const double mean = sum / count;
      const double sd = std::sqrt(std::max(0.0, squares / count - mean * mean));
      v[p] = static_cast<float>(mean - z * sd);
    }
  }

  IterationCore& core_;
  AttackSpec spec_;
  std::vector<Params> honest_models_;  // the neighbours' models of the last update
};

}  // namespace

std::unique_ptr<MixingVariant> make_byzantine(IterationCore& core,
                                              std::unique_ptr<MixingVariant> honest) {
  return std::make_unique<Byzantine>(core, std::move(honest));
}

}  // namespace fastk::consensus
