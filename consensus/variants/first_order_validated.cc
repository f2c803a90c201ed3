// Score-based validation by a first-order estimate ([consensus] validate = true,
// validation_score = "first_order"; docs/protocol.md §4.9). The loss scorer (validated.cc)
// computes L(x_i) - L(x_j) with forward passes of every model over a validation batch; this
// one estimates it from the gradient g the peer has just taken at x_i(k) on its own training
// batch, as Zeno++ does (Xie, Koyejo and Gupta 2020), and needs no pass over data:
//
//     s_j = <g, x_i - x_j> - rho |x_j - x_i|^2,   kept when s_j >= -validation_margin
//
// and s_j is finite: the same test as the loss scorer's (validation_rule.h), with the loss
// change replaced by its first-order Taylor estimate. The penalty does more work here: the
// estimate is good only near x_i, and a model far off (the `large`, `sign_flip` and `noise`
// attacks) is caught by its distance. One pass over each model computes both terms, at most
// once per iteration; the update is not delayed (no StartValidation), and the simulator
// charges one update term per model scored.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "consensus/model_distance.h"
#include "consensus/variants/validation_rule.h"
#include "consensus/variants/variants.h"
#include "consensus/variants/wrapped_variant.h"

namespace fastk::consensus {
namespace {

// <g, x_j - x_i> + rho |x_j - x_i|^2: minus the score, as a loss the test compares with 0.
double estimated_loss_change(std::span<const float> g, std::span<const float> own,
                             std::span<const float> model, double rho) {
  const SlopeAndDistance s = slope_and_squared_distance(g, own, model);
  return s.slope + rho * s.squared;
}

class FirstOrderValidated final : public WrappedVariant {
 public:
  FirstOrderValidated(IterationCore& core, std::unique_ptr<MixingVariant> rule)
      : WrappedVariant(std::move(rule)), core_(core) {
    check_validation_order(core.config());
  }

  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override {
    gradient_.assign(gradient.begin(), gradient.end());  // the raw gradient at x_i(k)
    gradient_of_ = core_.k();
    return inner().gradient_done(now_s, std::move(gradient), stats, out);
  }

  // A model that comes once the gradient is in is scored at once, while the check of its
  // values (IterationCore::unusable) has just brought it into the cache: the pass then
  // costs a fraction of one over a model read cold at the update. Only one this update may
  // mix: of this round, fresh, and not newer than this iteration (if a later update mixes a
  // newer one, it scores it then, against the own model of that update).
  void took_model(int s, std::int64_t tag, const Params& params) override {
    inner().took_model(s, tag, params);
    const auto& round = core_.round_slots();
    const bool in_round = std::find(round.begin(), round.end(), s) != round.end();
    if (gradient_of_ == core_.k() && in_round && tag <= core_.k() &&
        tag >= core_.k() - core_.config().staleness) {
      change_of(params);
    }
  }

  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    auto plan = inner().ready(now_s, out);
    if (!plan || plan->used.empty()) return plan;
    UpdatePlan passed{{}, plan->required};
    rejected_ = 0;
    for (int u : plan->used) {
      const Params& model =
          core_.mixed(core_.slot(core_.round_slots()[static_cast<std::size_t>(u)]));
      // The own model's loss change is 0; a gradient is finite (the protocol stops a run
      // whose gradient is not), so a change that is not finite is a model's fault.
      if (passes_validation(0.0, change_of(model), core_.config().validation_margin)) {
        passed.used.push_back(u);
      } else {
        ++rejected_;
      }
    }
    return passed;
  }

  bool validation_done(double, const ValidationDone& v, Actions&) override {
    return no_validation_asked(v);
  }

  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    inner().mix(now_s, plan, next, record);
    // One pass over each model scored, charged like one term of the mix.
    record.terms_mixed += static_cast<int>(changes_.size());
    record.rejected = std::exchange(rejected_, 0);
    changes_.clear();
  }

 private:
  // Model `model`'s estimated loss change this iteration, computed once.
  double change_of(const Params& model) {
    for (const auto& [scored, change] : changes_) {
      if (scored == model) return change;
    }
    const double change = estimated_loss_change(gradient_, core_.x()->values(), model->values(),
                                                core_.config().validation_penalty);
    changes_.emplace_back(model, change);
    return change;
  }

  IterationCore& core_;
  std::vector<float> gradient_;
  std::int64_t gradient_of_ = -1;                   // the iteration gradient_ was taken at
  std::vector<std::pair<Params, double>> changes_;  // this iteration's scored models
  int rejected_ = 0;
};

}  // namespace

std::unique_ptr<MixingVariant> make_first_order_validated(IterationCore& core,
                                                          std::unique_ptr<MixingVariant> rule) {
  return std::make_unique<FirstOrderValidated>(core, std::move(rule));
}

}  // namespace fastk::consensus
