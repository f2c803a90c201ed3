// Score-based validation ([consensus] validate, docs/protocol.md §4.9), a Zeno-style test of
// each model a peer is about to mix. When the wrapped variant is ready to update with a plan,
// the peer first asks its runtime for the loss of its own model x_i(k) and of each model the
// plan would mix, on one batch of validation_batch samples of its own shard drawn for k
// (StartValidation; both runtimes draw it the same way). Neighbour j's score is the loss
// change its model would bring:
//
//     s_j = L(x_i) - L(x_j),   kept when s_j >= -validation_margin and L(x_j) is finite
//
// (a neighbour whose model does no worse than the peer's own, within the margin). The update
// then mixes the kept ones with the wrapped variant's rule: the same plan without those left
// out, and no waiting for others in their place (the policy's count was met when the plan was
// made). If the peer's own loss is not finite every finite-loss model is kept: they are its
// way back.
//
// Zeno scores a gradient step u by f(x) - f(x - gamma u) - rho ||u||^2; here the "step" is the
// whole move to x_j (gamma = 1) and rho = 0: L(x_j) already grows with how far a harmful
// model is. What it does not stop: a model that is wrong in a way the batch does not see
// ("a little is enough" stays within the honest spread by design), docs/security.md.
//
// Models that replace a validated one in its slot while the losses are computed (a newer
// message from the same neighbour) are validated again before anything is mixed, so only
// models that passed are mixed.
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "consensus/variants/variants.h"
#include "consensus/variants/wrapped_variant.h"

namespace fastk::consensus {
namespace {

class Validated final : public WrappedVariant {
 public:
  Validated(IterationCore& core, std::unique_ptr<MixingVariant> rule)
      : WrappedVariant(std::move(rule)), core_(core) {}

  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    if (pending_) {
      if (!pending_->losses) return std::nullopt;  // the losses are being computed
      if (unchanged()) return kept();
      pending_.reset();  // a newer model came in a validated slot: validate again
    }
    auto plan = inner().ready(now_s, out);
    if (!plan || plan->used.empty()) return plan;
    Pending p{core_.k(), *plan, {}, {}};
    StartValidation request{core_.k(), {core_.x()}, core_.config().validation_batch};
    for (int u : plan->used) {
      const Params& model = core_.mixed(slot_of(u));
      p.models.push_back(model);
      request.models.push_back(model);
    }
    pending_ = std::move(p);
    out.push_back(std::move(request));
    return std::nullopt;
  }

  bool validation_done(double, const ValidationDone& v, Actions&) override {
    if (!pending_ || pending_->losses || v.iteration != pending_->iteration) return false;
    if (v.losses.size() != pending_->models.size() + 1) {
      throw std::logic_error("validation: " + std::to_string(v.losses.size()) + " losses for " +
                             std::to_string(pending_->models.size() + 1) + " models");
    }
    pending_->losses = v.losses;
    return true;
  }

  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    inner().mix(now_s, plan, next, record);
    record.rejected = pending_ ? rejected_ : 0;
    pending_.reset();
  }

 private:
  struct Pending {
    std::int64_t iteration = 0;
    UpdatePlan plan;
    std::vector<Params> models;  // what was validated, in plan.used order
    std::optional<std::vector<double>> losses;
  };

  const Slot& slot_of(int used) const {
    return core_.slot(core_.round_slots()[static_cast<std::size_t>(used)]);
  }
  bool unchanged() const {
    for (std::size_t m = 0; m < pending_->plan.used.size(); ++m) {
      if (core_.mixed(slot_of(pending_->plan.used[m])) != pending_->models[m]) return false;
    }
    return true;
  }
  UpdatePlan kept() {
    const std::vector<double>& losses = *pending_->losses;
    const double own = losses[0];
    UpdatePlan plan{{}, pending_->plan.required};
    rejected_ = 0;
    for (std::size_t m = 0; m < pending_->plan.used.size(); ++m) {
      const double loss = losses[m + 1];
      const bool keep = std::isfinite(loss) &&
                        (!std::isfinite(own) || own - loss >= -core_.config().validation_margin);
      if (keep) {
        plan.used.push_back(pending_->plan.used[m]);
      } else {
        ++rejected_;
      }
    }
    return plan;
  }

  IterationCore& core_;
  std::optional<Pending> pending_;
  int rejected_ = 0;
};

}  // namespace

std::unique_ptr<MixingVariant> make_validated(IterationCore& core,
                                              std::unique_ptr<MixingVariant> rule) {
  return std::make_unique<Validated>(core, std::move(rule));
}

}  // namespace fastk::consensus
