// What the gossip variants that send their models and mix them share: the backup policy's
// decision, the model sent when the iteration begins (combine-then-adapt) or once it stepped
// (adapt-then-combine), the gradient kept until the update, and waiting for the policy's
// number of fresh neighbours. A variant derived from it says only how it mixes (`mix`):
// weighted averaging, and the robust aggregation rules.
#pragma once

#include <span>
#include <vector>

#include "consensus/mixing_variant.h"
#include "consensus/variants/shared_steps.h"

namespace fastk::consensus {

class PlainGossip : public MixingVariant {
 public:
  explicit PlainGossip(IterationCore& core) : core_(core) {}

  std::size_t models_kept_queued() const override { return exact_queue(core_); }
  Params debiased(const Params& x) const override { return x; }
  void begin(double now_s, Actions& out) override;
  std::size_t gradient_size() const override { return core_.parameters(); }
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override;
  std::vector<float> release_gradient() override;
  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    return await_backups(core_, now_s, out);
  }
  void took_model(int, std::int64_t, const Params&) override {}
  bool take(double, const CodedGradientArrived& m, Actions&) override { return refuse(core_, m); }
  bool take(double, const DifferenceArrived& m, Actions&) override { return refuse(core_, m); }
  bool take(double, const AveragingArrived& m, bool, Actions&) override { return refuse(core_, m); }
  bool validation_done(double, const ValidationDone& v, Actions&) override {
    return no_validation_asked(v);
  }
  void neighbour_back(PeerId) override {}
  void settle() override {}
  std::int64_t recorded_tag(int s, bool used, std::int64_t used_tag) const override {
    return used ? used_tag : core_.slot(s).tag;
  }
  bool neighbours_need_goodbye() const override { return false; }

 protected:
  bool combine_first() const { return core_.config().order == UpdateOrder::kCombineThenAdapt; }
  // What the mix starts from: x(k) (combine-then-adapt) or y(k), already stepped.
  std::span<const float> own() const { return own_->values(); }
  // The step the mix takes after combining: the direction of the kept gradient
  // (combine-then-adapt), or none (adapt-then-combine: the models mixed already stepped).
  std::span<const float> step();
  // The used neighbours' models as the update mixes them (core.mixed), recorded as used
  // with their tags.
  std::vector<std::span<const float>> used_models(const UpdatePlan& plan,
                                                  IterationRecord& record) const;
  // For the adaptive policy: the disagreement between own() and `models`, when due, without
  // the `leave_out` farthest from own() (a robust rule's: an outlier would make it as large
  // as the outlier likes, and the peer wait for fewer).
  void observe_disagreement(const UpdatePlan& plan, std::vector<std::span<const float>> models,
                            std::size_t leave_out = 0);
  // The iteration is done with own().
  void done() { own_.reset(); }

  IterationCore& core_;

 private:
  std::vector<float> gradient_;  // combine-then-adapt: kept until the update; else scratch
  Params own_;
};

}  // namespace fastk::consensus
