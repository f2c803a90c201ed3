// Coded neighbourhoods ([coding], docs/coding.md): the peer computes its own partition's
// gradient and those it covers for its neighbours, sends each neighbour its coded combination
// after its model, and steps with the neighbourhood's decoded mean gradient once every block
// is covered (or coding.deadline_s after its own gradient, or when nobody left could cover a
// missing block). The models are mixed like weighted averaging's, over the fresh ones.
#include <algorithm>
#include <stdexcept>

#include "consensus/coded_neighbourhood.h"
#include "consensus/disagreement.h"
#include "consensus/mix_step.h"
#include "consensus/variants/plain_gossip.h"
#include "consensus/variants/variants.h"

namespace fastk::consensus {
namespace {

// Like plain gossip in what it sends and mixes; it asks for more gradients, waits for the
// code rather than the policy, and steps with the decoded gradient.
class Coded final : public PlainGossip {
 public:
  explicit Coded(IterationCore& core)
      : PlainGossip(core), coded_(make_code(core)), shares_(core.slots().size()) {}

  void begin(double now_s, Actions& out) override;
  std::size_t gradient_size() const override { return core_.parameters() * partitions_.size(); }
  std::vector<float> gradient_done(double now_s, std::vector<float> gradient,
                                   const GradientStats& stats, Actions& out) override;
  std::vector<float> release_gradient() override { return {}; }
  std::optional<UpdatePlan> ready(double now_s, Actions& out) override;
  void mix(double now_s, const UpdatePlan& plan, std::span<float> next,
           IterationRecord& record) override;
  using PlainGossip::take;
  bool take(double now_s, const CodedGradientArrived& m, Actions& out) override;

 private:
  // A neighbour's newest coded gradient; fresh like models (tag >= k - staleness), so a
  // neighbour that ran ahead still counts, which keeps the liveness argument of uncoded runs.
  struct Share {
    CodedPart coded;
    std::int64_t tag = -1;
  };
  static std::unique_ptr<CodedNeighbourhood> make_code(const IterationCore& core);
  void catch_up(double now_s);
  bool usable(const Share& share) const {
    return share.coded && share.tag >= core_.k() - core_.config().staleness;
  }
  std::vector<CodedNeighbourhood::Share> usable_shares() const;
  std::vector<int> still_to_cover(double now_s) const;

  std::unique_ptr<CodedNeighbourhood> coded_;
  std::vector<Share> shares_;       // per slot
  std::vector<PeerId> partitions_;  // computed this iteration
  std::vector<float> gradient_;     // the own partition's, kept until the update
  std::vector<float> decoded_;      // the decoded neighbourhood mean gradient
  Params own_;
};

std::unique_ptr<CodedNeighbourhood> Coded::make_code(const IterationCore& core) {
  const ProtocolConfig& config = core.config();
  if (config.order != UpdateOrder::kCombineThenAdapt) {
    throw std::invalid_argument(
        "coding needs combine_then_adapt: the step uses the neighbourhood's decoded gradient, "
        "which is only known after the models were sent");
  }
  if (coding::sends_shares(config.coding.scheme) && config.staleness > 0) {
    throw std::invalid_argument("coding.scheme = \"" + coding::to_string(config.coding.scheme) +
                                "\" decodes a block from shares of one iteration: staleness "
                                "must be 0");
  }
  return std::make_unique<CodedNeighbourhood>(core.self(), config.coding, core.schedule(),
                                              core.neighbours());
}

// A coded peer that fell behind every neighbour still there would send them only stale coded
// gradients, and since coding lets them go on without it, it would stay behind for good. Like
// a straggler in synchronous gradient coding, it skips to the slowest neighbour's iteration
// (docs/protocol.md §2.5): every neighbour has sent that tag, so nothing it then waits for is
// missing.
void Coded::catch_up(double now_s) {
  std::optional<std::int64_t> slowest;
  for (const Slot& slot : core_.slots()) {
    if (core_.gone(slot, now_s)) continue;
    if (slot.tag < 0) return;  // not heard from yet: it is not ahead
    slowest = slowest ? std::min(*slowest, slot.tag) : slot.tag;
  }
  if (slowest && *slowest > core_.k()) {
    core_.set_k(std::min(*slowest, core_.config().iterations - 1));
  }
}

// The model goes out with the coded gradients once they are computed.
void Coded::begin(double now_s, Actions& out) {
  catch_up(now_s);
  core_.begin_round(now_s);
  core_.decide(now_s);
  partitions_ = coded_->begin_iteration();
  core_.set_gradient_point(core_.x());
  const bool split = core_.config().coding.split_batch;
  StartGradient request{core_.k(), core_.x(), partitions_, split, 1.0};
  if (!split) request.work = static_cast<double>(partitions_.size());
  out.push_back(std::move(request));
}

std::vector<float> Coded::gradient_done(double now_s, std::vector<float> gradient,
                                        const GradientStats&, Actions& out) {
  const auto own_size = static_cast<std::ptrdiff_t>(core_.parameters());
  gradient_.assign(gradient.begin(), gradient.begin() + own_size);
  own_ = core_.x();
  const double compute_s = now_s - core_.start_s();
  coded_->observe_own_compute(compute_s);
  coded_->encode(core_.k(), core_.x(), core_.round().send_to, partitions_, gradient, compute_s,
                 out);
  if (core_.config().coding.deadline_s > 0) {
    core_.relax_at() = now_s + core_.config().coding.deadline_s;
  }
  return gradient;
}

bool Coded::take(double now_s, const CodedGradientArrived& m, Actions&) {
  const CodedPart& coded = m.coded;
  // A part that fits no block of this neighbourhood has no length to check against: it is
  // not in the code (after the neighbour, tag and value checks).
  const int block = coded ? coded_->share_block(m.from, coded->covers) : -1;
  std::size_t size = core_.parameters();
  if (block >= 0) {
    size = coded_->message_size(block, core_.parameters());
  } else if (coded && coded->gradient) {
    size = coded->gradient->values().size();
  }
  std::optional<DropCause> cause =
      core_.unusable(m.from, m.tag, coded ? coded->gradient : nullptr, size);
  if (!cause && !coded_->valid(m.from, *coded, core_.parameters())) {
    cause = DropCause::kNotInTheCode;
  }
  if (cause) {
    core_.drops().add(*cause);
    return false;
  }
  const int s = core_.slot_of(m.from);
  Slot& slot = core_.slot(s);
  core_.heard_from(slot, now_s);
  Share& share = shares_[static_cast<std::size_t>(s)];
  if (m.tag > share.tag) {  // an older one (reordered, duplicated) teaches nothing
    slot.bytes_since_update +=
        static_cast<std::int64_t>(coded->gradient->values().size() * sizeof(float));
    coded_->learn(m.from, *coded);
    share = {coded, m.tag};
  }
  return true;
}

std::vector<CodedNeighbourhood::Share> Coded::usable_shares() const {
  std::vector<CodedNeighbourhood::Share> shares;
  for (std::size_t s = 0; s < shares_.size(); ++s) {
    if (usable(shares_[s])) {
      shares.push_back({core_.neighbours()[s], shares_[s].tag, shares_[s].coded.get()});
    }
  }
  return shares;
}

// The neighbours still worth waiting for: with dynamic roles anyone may cover any block;
// otherwise only a missing block's members, and only while enough of them are left to
// cover it.
std::vector<int> Coded::still_to_cover(double now_s) const {
  const auto& blocks = coded_->blocks();
  const auto shares = usable_shares();
  const std::vector<bool> covered = coded_->covered(shares);
  std::vector<int> have(blocks.size(), 0), pending(blocks.size(), 0);  // per block
  for (const auto& share : shares) {
    ++have[static_cast<std::size_t>(coded_->share_block(share.from, share.coded->covers))];
  }
  std::vector<std::pair<int, std::size_t>> candidates;  // (slot, its block)
  for (int s : core_.round_slots()) {
    if (usable(shares_[static_cast<std::size_t>(s)]) || core_.gone(core_.slot(s), now_s)) {
      continue;
    }
    const PeerId j = core_.neighbours()[static_cast<std::size_t>(s)];
    const auto b = static_cast<std::size_t>(coded_->member_block(j));
    candidates.emplace_back(s, b);
    ++pending[b];
  }
  std::vector<int> waiting_for;
  for (const auto& [s, b] : candidates) {
    const bool can_cover =
        !covered[b] && have[b] + pending[b] >= coded_->needed(static_cast<int>(b));
    if (core_.config().coding.dynamic_roles || can_cover) waiting_for.push_back(s);
  }
  if (std::all_of(covered.begin(), covered.end(), [](bool c) { return c; })) return {};
  return waiting_for;
}

// Step once every block of the neighbourhood is covered, or the deadline passed, or nobody
// is left who could still cover a missing block.
std::optional<UpdatePlan> Coded::ready(double now_s, Actions& out) {
  const std::vector<int> waiting_for = still_to_cover(now_s);
  const std::optional<double> relax_at = core_.relax_at();
  const bool past_deadline = relax_at && now_s >= *relax_at;
  if (!past_deadline && !waiting_for.empty()) {
    if (relax_at) core_.arm(*relax_at, out);
    core_.arm_silence_timer(waiting_for, now_s, out);
    return std::nullopt;
  }
  std::vector<int> used;
  for (std::size_t r = 0; r < core_.round_slots().size(); ++r) {
    if (core_.fresh(core_.slot(core_.round_slots()[r]))) used.push_back(static_cast<int>(r));
  }
  const int required = static_cast<int>(used.size());
  return UpdatePlan{std::move(used), required};
}

void Coded::mix(double, const UpdatePlan& plan, std::span<float> next, IterationRecord& record) {
  const std::vector<MixTerm> terms = weighted_terms(core_, plan.used, record);
  record.terms_mixed = static_cast<int>(terms.size());
  decoded_.resize(core_.parameters());
  const CodedNeighbourhood::Decoded d = coded_->decode(gradient_, usable_shares(), decoded_);
  record.partitions_computed = static_cast<int>(partitions_.size());
  record.decodable = d.decodable;
  record.coded_members = d.members;
  record.decode_residual = d.residual;
  coded_->plan_roles();
  if (core_.has_local_step()) core_.to_direction(decoded_);
  mix_and_step(next, static_cast<float>(record.self_weight), own_->values(), terms,
               static_cast<float>(core_.learning_rate()), decoded_);
  if (disagreement_due(core_, plan.used)) {  // a policy that waits for all wants none today
    std::vector<std::span<const float>> models;
    for (const MixTerm& term : terms) models.push_back(term.model);
    core_.policy().observe_disagreement(neighbourhood_disagreement(own_->values(), models));
  }
  own_.reset();
}

}  // namespace

std::unique_ptr<MixingVariant> make_coded_neighbourhood(IterationCore& core) {
  return std::make_unique<Coded>(core);
}

}  // namespace fastk::consensus
