// A variant around another one (a decorator): every method passes to the wrapped variant, and
// a wrapper overrides only the steps it changes. Byzantine (an attacker around its honest
// variant) and LocalSteps (local SGD steps between the wrapped variant's gossips) are two.
#pragma once

#include <memory>
#include <utility>

#include "consensus/mixing_variant.h"

namespace fastk::consensus {

class WrappedVariant : public MixingVariant {
 public:
  explicit WrappedVariant(std::unique_ptr<MixingVariant> inner) : inner_(std::move(inner)) {}

  std::size_t models_kept_queued() const override { return inner_->models_kept_queued(); }
  Params debiased(const Params& x) const override { return inner_->debiased(x); }
  void begin(double now_s, Actions& out) override { inner_->begin(now_s, out); }
  std::size_t gradient_size() const override { return inner_->gradient_size(); }
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override {
    return inner_->gradient_done(now_s, std::move(gradient), stats, out);
  }
  std::vector<float> release_gradient() override { return inner_->release_gradient(); }
  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    return inner_->ready(now_s, out);
  }
  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    inner_->mix(now_s, plan, next, record);
  }
  void took_model(int s, std::int64_t tag, const Params& params) override {
    inner_->took_model(s, tag, params);
  }
  bool take(double now_s, const CodedGradientArrived& m, Actions& out) override {
    return inner_->take(now_s, m, out);
  }
  bool take(double now_s, const DifferenceArrived& m, Actions& out) override {
    return inner_->take(now_s, m, out);
  }
  bool take(double now_s, const AveragingArrived& m, bool in_play, Actions& out) override {
    return inner_->take(now_s, m, in_play, out);
  }
  bool validation_done(double now_s, const ValidationDone& v, Actions& out) override {
    return inner_->validation_done(now_s, v, out);
  }
  void neighbour_back(PeerId peer) override { inner_->neighbour_back(peer); }
  void settle() override { inner_->settle(); }
  std::int64_t recorded_tag(int s, bool used, std::int64_t used_tag) const override {
    return inner_->recorded_tag(s, used, used_tag);
  }
  bool neighbours_need_goodbye() const override { return inner_->neighbours_need_goodbye(); }

 protected:
  MixingVariant& inner() { return *inner_; }

 private:
  std::unique_ptr<MixingVariant> inner_;
};

}  // namespace fastk::consensus
