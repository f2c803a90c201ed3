#include "consensus/variants/compressed_gossip.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "consensus/disagreement.h"
#include "consensus/mix_step.h"
#include "consensus/variants/shared_steps.h"
#include "consensus/variants/variants.h"
#include "learning/random.h"

namespace fastk::consensus {

std::optional<std::string> unfit_for_compressed_gossip(const topology::TopologySchedule& schedule,
                                                       std::optional<PeerId> peer) {
  // Every copy of an estimate must see every difference: a time-varying schedule sends each
  // round to other peers, and a directed graph to peers that do not send back.
  if (schedule.fixed_graph() == nullptr) {
    return "needs a static undirected graph: on a time-varying or directed one a difference "
           "misses peers that keep a copy of the sender's estimate";
  }
  // The mix moves no mass only if W_ij = W_ji (docs/compression.md §1).
  const PeerId first = peer.value_or(0);
  const PeerId last = peer ? *peer + 1 : static_cast<PeerId>(schedule.size());
  for (PeerId i = first; i < last; ++i) {
    const topology::RoundPeers mine = schedule.round(i, 0);
    for (std::size_t r = 0; r < mine.receive_from.size(); ++r) {
      const PeerId j = mine.receive_from[r];
      if (!peer && j < i) continue;  // each pair once
      const topology::RoundPeers theirs = schedule.round(j, 0);
      const auto at = std::find(theirs.receive_from.begin(), theirs.receive_from.end(), i);
      const double back =
          at == theirs.receive_from.end()
              ? 0.0
              : theirs.receive_weights[static_cast<std::size_t>(at - theirs.receive_from.begin())];
      if (std::abs(back - mine.receive_weights[r]) > 1e-9) {
        return "needs symmetric weights, but W_" + std::to_string(i) + "," + std::to_string(j) +
               " != W_" + std::to_string(j) + "," + std::to_string(i) +
               " (weights = \"uniform\" on an irregular graph?): the models would drift from "
               "their mean";
      }
    }
  }
  return std::nullopt;
}

CompressedGossip::CompressedGossip(IterationCore& core)
    : PlainGossip(core),
      own_estimate_(std::vector<float>(core.x()->values().begin(), core.x()->values().end())),
      estimates_(core.slots().size(), own_estimate_),  // every peer starts from the same model
      differences_(core.slots().size()),
      difference_tag_(core.slots().size(), -1) {
  check();
}

// What CHOCO's compressed gossip leaves no room for: each names the option to drop.
void CompressedGossip::check() const {
  const ProtocolConfig& config = core_.config();
  const auto refuse_with = [](const std::string& what) {
    throw std::invalid_argument("compressed gossip " + what);
  };
  compression::check(*config.compression);
  if (config.error_reset) compression::check(*config.error_reset);
  if (!(config.consensus_step > 0 && config.consensus_step <= 1)) {
    refuse_with("needs compression.consensus_step in (0, 1]");
  }
  if (config.order != UpdateOrder::kAdaptThenCombine) {
    refuse_with("steps, then sends its difference: set consensus.order = \"adapt_then_combine\"");
  }
  if (config.push_sum) refuse_with("and push_sum exclude each other");
  if (config.coding.scheme != coding::Scheme::kNone) refuse_with("and coding exclude each other");
  if (core_.policy().pairwise_averaging()) refuse_with("and policy ad_psgd exclude each other");
  if (const auto why = unfit_for_compressed_gossip(core_.schedule(), core_.self())) {
    refuse_with(*why);
  }
}

std::span<const float> CompressedGossip::public_estimate(PeerId peer) const {
  if (peer == core_.self()) return own_estimate_.value();
  const int s = core_.slot_of(peer);
  return s < 0 ? std::span<const float>{} : estimates_[static_cast<std::size_t>(s)].value();
}

std::vector<float> CompressedGossip::gradient_done(double now_s, std::vector<float> gradient,
                                                   const GradientStats& stats, Actions& out) {
  observe_gradient(core_, stats, now_s);
  own_ = adapt(core_, gradient, scratch_);
  // The seed: a hash of (run seed, peer, iteration), the same in both runtimes.
  const std::uint64_t seed = learning::mix64(
      core_.config().seed ^ learning::mix64((static_cast<std::uint64_t>(core_.self()) << 40) ^
                                            static_cast<std::uint64_t>(core_.k())));
  const ProtocolConfig& config = core_.config();
  const compression::CompressorSpec& spec =
      resets() ? config.error_reset->spec : *config.compression;
  auto difference = std::make_shared<const compression::Compressed>(
      own_estimate_.advance(spec, own_->values(), seed));
  // Not to neighbours that said goodbye: they cannot come back to read it.
  std::vector<PeerId> to;
  for (PeerId j : core_.round().send_to) {
    const int s = core_.slot_of(j);
    if (s < 0 || !core_.slot(s).departed) to.push_back(j);
  }
  if (!to.empty()) out.push_back(SendCompressed{std::move(to), core_.k(), difference});
  return gradient;
}

// Keeps all of y and adds gamma times the estimates' differences; the record lists the used
// neighbours for telemetry (the mix takes every neighbour's estimate).
void CompressedGossip::mix(double now_s, const UpdatePlan& plan, std::span<float> next,
                           IterationRecord& record) {
  const std::vector<MixTerm> terms = estimate_terms(now_s);
  record.self_weight = 1.0;
  const auto& round = core_.round();
  for (int u : plan.used) {
    const auto r = static_cast<std::size_t>(u);
    record.used.push_back(round.receive_from[r]);
    record.used_tags.push_back(core_.slot(core_.round_slots()[r]).tag);
    record.used_weights.push_back(consensus_step() * round.receive_weights[r]);
  }
  record.terms_mixed = static_cast<int>(terms.size());
  mix_and_step(next, 1.0f, own_->values(), terms, static_cast<float>(core_.learning_rate()), {});
  if (disagreement_due(core_, plan.used)) {
    // Compressed gossip knows its neighbours' models by their public estimates.
    std::vector<std::span<const float>> models;
    for (int u : plan.used) {
      models.push_back(
          estimates_[static_cast<std::size_t>(core_.round_slots()[static_cast<std::size_t>(u)])]
              .value());
    }
    core_.policy().observe_disagreement(neighbourhood_disagreement(own_estimate_.value(), models));
  }
  own_.reset();
}

bool CompressedGossip::resets() const {
  return compression::resets(core_.config().error_reset, core_.gossip_round());
}

double CompressedGossip::consensus_step() const {
  return resets() ? core_.config().error_reset->consensus_step : core_.config().consensus_step;
}

std::vector<MixTerm> CompressedGossip::estimate_terms(double now_s) {
  std::vector<MixTerm> terms;
  const double gamma = consensus_step();
  float total = 0;
  for (std::size_t r = 0; r < core_.round_slots().size(); ++r) {
    const auto s = static_cast<std::size_t>(core_.round_slots()[r]);
    const Slot& slot = core_.slot(static_cast<int>(s));
    auto& pending = differences_[s];
    while (!pending.empty() && pending.front().first <= core_.k()) {
      estimates_[s].apply(*pending.front().second);
      pending.pop_front();
    }
    // A neighbour gone before sending this iteration's difference (it died, or left early)
    // pulls no more: its estimate is frozen. One that finished has sent them all.
    if (slot.parted || (core_.gone(slot, now_s) && difference_tag_[s] < core_.k())) continue;
    const auto weight = static_cast<float>(gamma * core_.round().receive_weights[r]);
    total += weight;
    terms.push_back({weight, estimates_[s].value()});
  }
  // Exactly minus the coefficients above, so that equal estimates cancel to the last bit.
  terms.push_back({-total, own_estimate_.value()});
  return terms;
}

bool CompressedGossip::take(double now_s, const DifferenceArrived& m, Actions&) {
  const int s = core_.slot_of(m.from);
  std::optional<DropCause> cause;
  if (s < 0) {
    cause = DropCause::kNotNeighbour;
  } else if (m.tag < 0 || m.tag >= core_.config().iterations) {
    cause = DropCause::kTagOutOfRange;
  } else if (!m.difference || m.difference->length != core_.parameters()) {
    cause = DropCause::kWrongSize;
  } else if (compression::invalid(*m.difference) ||
             m.tag <= difference_tag_[static_cast<std::size_t>(s)]) {
    cause = DropCause::kBadDifference;  // malformed, or a repeat: harmless to drop
  } else if (m.tag > difference_tag_[static_cast<std::size_t>(s)] + core_.config().local_steps) {
    // Differences go out on every gossip iteration (every local_steps-th): one was lost.
    core_.drops().add(DropCause::kBadDifference);
    part_from(core_.slot(s));
    return true;  // reports it gone, and stops waiting for it
  }
  if (cause) {
    core_.drops().add(*cause);
    return false;
  }
  const auto i = static_cast<std::size_t>(s);
  Slot& slot = core_.slot(s);
  core_.heard_from(slot, now_s);
  core_.arrivals().message(m.from, m.tag, now_s);
  slot.bytes_since_update += static_cast<std::int64_t>(m.difference->payload_bytes());
  difference_tag_[i] = m.tag;
  differences_[i].emplace_back(m.tag, m.difference);
  slot.tag = m.tag;
  // Under full a neighbour leads by less than n iterations, so the update of each iteration
  // still applies exactly that iteration's differences; one leading by more (it does not wait
  // for this peer) has its oldest applied now, which keeps the queue bounded.
  while (differences_[i].size() > static_cast<std::size_t>(core_.schedule().size())) {
    estimates_[i].apply(*differences_[i].front().second);
    differences_[i].pop_front();
  }
  return true;
}

// A gap in a neighbour's differences (the transport lost one: a connection reset) parts this
// peer's copy of its estimate from every other for good. Mixing it would move mass and pull
// toward a model nobody has, and waiting would wait for ever: it is gone, reported as such.
void CompressedGossip::part_from(Slot& slot) {
  if (slot.parted) return;
  slot.parted = true;
  slot.reported_gone = false;
  core_.note_departure();
}

std::unique_ptr<MixingVariant> make_compressed_gossip(IterationCore& core) {
  return std::make_unique<CompressedGossip>(core);
}

}  // namespace fastk::consensus
