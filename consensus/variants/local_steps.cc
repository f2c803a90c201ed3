// Local steps ([consensus] local_steps = H, docs/protocol.md §4.8): the peer gossips on every
// H-th iteration only (k + 1 a multiple of H) and takes plain local SGD steps in between, as
// local SGD does: H - 1 iterations of x(k+1) = x(k) - lr g(k), each its own iteration (the
// learning-rate schedule, evaluation and iterations.csv count SGD steps), then one iteration
// of the variant it wraps, which sends, waits and mixes as it always does.
//
// A local iteration has a round with no neighbours: it sends nothing, awaits nobody, opens no
// iteration of the arrival window (the adaptive policy learns from gossip iterations only) and
// lists no neighbour in the record. What arrives meanwhile is taken by the wrapped variant as
// usual. Tags are iteration numbers, so neighbours' models carry tags H - 1, 2H - 1, ...; a
// gossip iteration's freshness test (tag >= k - staleness) is the one it always was.
//
// With compressed gossip the residual x - x_hat (what the public estimate does not know yet)
// grows by the H local steps and goes out in the next compressed difference: CHOCO's error
// feedback, at the gossip rate.
#include <utility>

#include "consensus/mix_step.h"
#include "consensus/variants/variants.h"
#include "consensus/variants/wrapped_variant.h"

namespace fastk::consensus {
namespace {

class LocalSteps final : public WrappedVariant {
 public:
  LocalSteps(IterationCore& core, std::unique_ptr<MixingVariant> gossip)
      : WrappedVariant(std::move(gossip)), core_(core) {}

  void begin(double now_s, Actions& out) override {
    local_ = !core_.gossips();
    if (!local_) {
      inner().begin(now_s, out);
      return;
    }
    core_.begin_local_round(now_s);
    core_.set_gradient_point(core_.x());
    out.push_back(StartGradient{
        core_.k(), core_.x(), {}, true, 1.0, core_.policy().wants_gradient_stats(core_.k())});
  }
  std::size_t gradient_size() const override {
    return local_ ? core_.parameters() : WrappedVariant::gradient_size();
  }
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override {
    if (!local_) return inner().gradient_done(now_s, std::move(gradient), stats, out);
    core_.policy().observe_gradient(stats);  // the policy's gradient statistics, every step
    std::swap(gradient_, gradient);
    return gradient;
  }
  // Whichever is kept: both are done with by the time a runtime asks.
  std::vector<float> release_gradient() override {
    return gradient_.empty() ? inner().release_gradient() : std::exchange(gradient_, {});
  }
  std::optional<UpdatePlan> ready(double now_s, Actions& out) override {
    if (!local_) return inner().ready(now_s, out);
    return UpdatePlan{};
  }
  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override {
    if (!local_) {
      inner().mix(now_s, plan, next, record);
      return;
    }
    if (core_.has_local_step()) core_.to_direction(gradient_);
    // The update's kernel with no neighbour terms: x - lr d.
    mix_and_step(next, 1.0f, core_.x()->values(), {}, static_cast<float>(core_.learning_rate()),
                 gradient_);
    record.self_weight = 1.0;
  }

 private:
  IterationCore& core_;
  bool local_ = false;           // the current iteration is a local step
  std::vector<float> gradient_;  // a local iteration's, kept until its update
};

}  // namespace

std::unique_ptr<MixingVariant> make_local_steps(IterationCore& core,
                                                std::unique_ptr<MixingVariant> gossip) {
  return std::make_unique<LocalSteps>(core, std::move(gossip));
}

}  // namespace fastk::consensus
