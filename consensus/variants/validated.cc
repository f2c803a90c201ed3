// Score-based validation ([consensus] validate, docs/protocol.md §4.9), a Zeno-style test of
// each model a peer is about to mix. When the wrapped variant is ready to update with a plan,
// the peer first asks its runtime for the loss of its own model x_i(k) and of each model the
// plan would mix, on one batch of validation_batch samples of its own shard drawn for k
// (StartValidation; both runtimes draw it the same way). Neighbour j's score is the loss
// change its model would bring:
//
//     s_j = L(x_i) - L(x_j) - rho |x_j - x_i|^2,   kept when s_j >= -validation_margin
//
// and L(x_j) is finite (rho: validation_penalty): a neighbour whose model does no worse than
// the peer's own, within the margin, and is not far from it. The update
// then mixes the kept ones with the wrapped variant's rule: the same plan without those left
// out, and no waiting for others in their place (the policy's count was met when the plan was
// made). If the peer's own loss is not finite every finite-loss model is kept: they are its
// way back.
//
// Zeno scores a gradient step u by f(x) - f(x - gamma u) - rho ||u||^2; here the "step" is the
// whole move to x_j (gamma = 1). The penalty is needed: a model with every value equal (the
// `large` attack) gives every class the same logit, a loss of ln(classes), which an
// untrained model's loss is close to; its distance gives it away. What it does not stop: a model
// that is wrong in a way the batch does not see
// ("a little is enough" stays within the honest spread by design), docs/security.md.
//
// Each model is scored once per iteration: a newer model that replaces a scored one in its
// slot while the losses are computed (a neighbour that does not wait for this peer) is scored
// when the update is next ready, with the others' losses kept, so only models that passed
// are mixed and none is scored twice.
//
// Combine-then-adapt only (validation_rule.h). first_order_validated.cc is the other scorer,
// which estimates the loss change from the peer's gradient instead of computing it.
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "consensus/disagreement.h"
#include "consensus/variants/validation_rule.h"
#include "consensus/variants/variants.h"
#include "consensus/variants/wrapped_variant.h"

namespace fastk::consensus {
namespace {

class Validated final : public WrappedVariant {
 public:
  Validated(IterationCore& core, std::unique_ptr<MixingVariant> rule)
      : WrappedVariant(std::move(rule)), core_(core) {
    check_validation_order(core.config());
  }

  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    if (asked_) return std::nullopt;  // the losses are being computed
    auto plan = inner().ready(now_s, out);
    if (!plan || plan->used.empty()) return plan;
    std::vector<Params> unscored;
    if (!own_loss_) unscored.push_back(core_.x());
    for (int u : plan->used) {
      const Params& model = core_.mixed(slot_of(u));
      if (!loss_of(model)) unscored.push_back(model);
    }
    if (unscored.empty()) return kept(*plan);
    asked_ = Asked{now_s, !own_loss_, unscored};
    out.push_back(StartValidation{core_.k(), std::move(unscored), core_.config().validation_batch});
    return std::nullopt;
  }

  bool validation_done(double now_s, const ValidationDone& v, Actions&) override {
    if (!asked_ || v.iteration != core_.k()) return false;
    if (v.losses.size() != asked_->models.size()) {
      throw std::logic_error("validation: " + std::to_string(v.losses.size()) + " losses for " +
                             std::to_string(asked_->models.size()) + " models");
    }
    for (std::size_t m = 0; m < v.losses.size(); ++m) {
      if (m == 0 && asked_->own_first) {
        own_loss_ = v.losses[m];
      } else {
        // The loss as the score needs it: plus the penalty for the distance from the own model.
        const double d = distance_between(core_.x()->values(), asked_->models[m]->values());
        scored_.emplace_back(asked_->models[m],
                             v.losses[m] + core_.config().validation_penalty * d * d);
      }
    }
    validation_s_ += now_s - asked_->at_s;
    asked_.reset();
    return true;
  }

  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    inner().mix(now_s, plan, next, record);
    // Each model scored was read once more, for its distance: like one term of the mix.
    record.terms_mixed += static_cast<int>(scored_.size());
    record.rejected = std::exchange(rejected_, 0);
    record.validation_s = std::exchange(validation_s_, 0.0);
    own_loss_.reset();
    scored_.clear();
  }

 private:
  struct Asked {
    double at_s = 0;
    bool own_first = false;      // models[0] is the own model
    std::vector<Params> models;  // in the StartValidation's order
  };

  const Slot& slot_of(int used) const {
    return core_.slot(core_.round_slots()[static_cast<std::size_t>(used)]);
  }
  std::optional<double> loss_of(const Params& model) const {
    for (const auto& [scored, loss] : scored_) {
      if (scored == model) return loss;
    }
    return std::nullopt;
  }
  // The plan without the models that failed (every one in `plan` is scored).
  UpdatePlan kept(const UpdatePlan& plan) {
    const double own = *own_loss_;
    UpdatePlan passed{{}, plan.required};
    rejected_ = 0;
    for (int u : plan.used) {
      const double loss = *loss_of(core_.mixed(slot_of(u)));  // penalty included
      if (passes_validation(own, loss, core_.config().validation_margin)) {
        passed.used.push_back(u);
      } else {
        ++rejected_;
      }
    }
    return passed;
  }

  IterationCore& core_;
  std::optional<Asked> asked_;
  std::optional<double> own_loss_;                 // L(x_i(k)), once scored
  std::vector<std::pair<Params, double>> scored_;  // this iteration's models, loss + penalty
  int rejected_ = 0;
  double validation_s_ = 0;  // waiting for losses this iteration
};

}  // namespace

std::unique_ptr<MixingVariant> make_validated(IterationCore& core,
                                              std::unique_ptr<MixingVariant> rule) {
  return std::make_unique<Validated>(core, std::move(rule));
}

}  // namespace fastk::consensus
