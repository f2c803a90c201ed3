#include "consensus/peer_protocol.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "consensus/comeback.h"
#include "consensus/disagreement.h"
#include "consensus/mix_step.h"
#include "learning/random.h"

namespace fastk::consensus {

UpdateOrder parse_update_order(const std::string& name) {
  if (name == "combine_then_adapt") return UpdateOrder::kCombineThenAdapt;
  if (name == "adapt_then_combine") return UpdateOrder::kAdaptThenCombine;
  throw std::invalid_argument("unknown update order \"" + name +
                              "\"; expected combine_then_adapt or adapt_then_combine");
}

std::string to_string(UpdateOrder order) {
  return order == UpdateOrder::kCombineThenAdapt ? "combine_then_adapt" : "adapt_then_combine";
}

PeerProtocol::PeerProtocol(PeerId self, std::shared_ptr<const topology::TopologySchedule> schedule,
                           ProtocolConfig config, Params initial)
    : self_(self),
      schedule_(std::move(schedule)),
      config_(std::move(config)),
      policy_(make_policy(config_.policy)),
      parameters_(0),
      x_(std::move(initial)),
      arrivals_(config_.policy.window) {
  if (!schedule_) throw std::invalid_argument("PeerProtocol: no topology schedule");
  if (self_ < 0 || self_ >= schedule_->size()) {
    throw std::invalid_argument("PeerProtocol: peer id " + std::to_string(self_) + " outside [0, " +
                                std::to_string(schedule_->size()) + ")");
  }
  if (!x_) throw std::invalid_argument("PeerProtocol: no initial parameters");
  if (config_.iterations < 0) throw std::invalid_argument("PeerProtocol: iterations < 0");
  if (config_.m_min < 0) throw std::invalid_argument("PeerProtocol: m_min < 0");
  if (config_.staleness < 0) throw std::invalid_argument("PeerProtocol: staleness < 0");
  if (config_.max_gap < 0) throw std::invalid_argument("PeerProtocol: max_gap < 0");
  if (config_.silence_timeout_s < 0) {
    throw std::invalid_argument("PeerProtocol: silence_timeout_s < 0");
  }
  if (config_.push_sum) {
    check_push_sum();
    // Under full a neighbour leads by at most the directed distance back to this peer (< n),
    // so n kept messages never need folding there.
    max_masses_ = std::max<std::size_t>(8, static_cast<std::size_t>(schedule_->size()));
    std::vector<float> with_weight(x_->values().begin(), x_->values().end());
    with_weight.push_back(1.0f);  // w(0) = 1
    x_ = make_params(std::move(with_weight));
  }
  parameters_ = x_->values().size();
  if (learning::has_direction_state(config_.optimizer)) {
    local_step_.emplace(config_.optimizer, config_.push_sum ? parameters_ - 1 : parameters_,
                        config_.iterations);
  }
  std::set<PeerId> union_of_rounds;
  for (int r = 0; r < schedule_->period(); ++r) {
    for (PeerId j : schedule_->round(self_, r).receive_from) union_of_rounds.insert(j);
  }
  neighbours_.assign(union_of_rounds.begin(), union_of_rounds.end());
  std::set<PeerId> receivers;
  for (int r = 0; r < schedule_->period(); ++r) {
    for (PeerId j : schedule_->round(self_, r).send_to) receivers.insert(j);
  }
  receivers_.assign(receivers.begin(), receivers.end());
  std::set_union(neighbours_.begin(), neighbours_.end(), receivers_.begin(), receivers_.end(),
                 std::back_inserter(contacts_));
  slots_.resize(neighbours_.size());
  if (config_.keep_connected) await_spanning_tree();
  if (config_.coding.scheme != coding::Scheme::kNone) {
    if (config_.order != UpdateOrder::kCombineThenAdapt) {
      throw std::invalid_argument(
          "coding needs combine_then_adapt: the step uses the neighbourhood's decoded gradient, "
          "which is only known after the models were sent");
    }
    if (config_.coding.scheme == coding::Scheme::kMds && config_.staleness > 0) {
      throw std::invalid_argument(
          "coding.scheme = \"mds\" decodes a block from shares of one iteration: staleness must "
          "be 0");
    }
    coded_ = std::make_unique<CodedNeighbourhood>(self_, config_.coding, *schedule_, neighbours_);
  }
  if (config_.compression) {
    check_compression();
    own_estimate_.emplace(std::vector<float>(x_->values().begin(), x_->values().end()));
    estimates_.assign(slots_.size(), *own_estimate_);  // every peer starts from the same model
  }
  if (policy_->pairwise_averaging()) {
    check_pairwise_averaging();
    averaging_ = std::make_unique<PairwiseAveraging>(self_, *schedule_, config_.seed, parameters_);
  }
}

// What AD-PSGD leaves no room for: each names the option to drop.
void PeerProtocol::check_pairwise_averaging() const {
  const auto refuse = [](const std::string& what) {
    throw std::invalid_argument("consensus.policy = \"ad_psgd\" " + what);
  };
  if (config_.push_sum) refuse("and push_sum exclude each other: AD-PSGD keeps the mean itself");
  if (config_.coding.scheme != coding::Scheme::kNone) {
    refuse("and coding exclude each other: nobody waits for a neighbourhood's gradients");
  }
  if (config_.keep_connected) refuse("waits for no neighbour: drop keep_connected");
  if (config_.max_gap > 0) refuse("is asynchronous: drop max_gap");
  if (config_.order != UpdateOrder::kCombineThenAdapt) {
    refuse("averages, then steps with the gradient taken before: drop order");
  }
}

// What CHOCO's compressed gossip leaves no room for: each names the option to drop.
void PeerProtocol::check_compression() const {
  const auto refuse = [](const std::string& what) {
    throw std::invalid_argument("compressed gossip " + what);
  };
  compression::check(*config_.compression);
  if (!(config_.consensus_step > 0 && config_.consensus_step <= 1)) {
    refuse("needs compression.consensus_step in (0, 1]");
  }
  if (config_.order != UpdateOrder::kAdaptThenCombine) {
    refuse("steps, then sends its difference: set consensus.order = \"adapt_then_combine\"");
  }
  if (config_.push_sum) refuse("and push_sum exclude each other");
  if (config_.coding.scheme != coding::Scheme::kNone) refuse("and coding exclude each other");
  if (policy_->pairwise_averaging()) refuse("and policy ad_psgd exclude each other");
  if (const auto why = unfit_for_compressed_gossip(*schedule_, self_)) refuse(*why);
}

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

void PeerProtocol::await_spanning_tree() {
  if (config_.coding.scheme != coding::Scheme::kNone) {
    throw std::invalid_argument(
        "keep_connected and coding exclude each other: a coded neighbourhood waits until its "
        "gradient decodes, not for chosen neighbours");
  }
  const auto tree = schedule_->spanning_tree_neighbours(self_);
  if (!tree) {
    throw std::invalid_argument(
        "keep_connected needs a static graph: on a time-varying schedule the neighbours change "
        "every round");
  }
  for (PeerId j : *tree) tree_slots_.push_back(slot_of(j));
}

void PeerProtocol::check_push_sum() const {
  if (config_.coding.scheme != coding::Scheme::kNone) {
    throw std::invalid_argument("push_sum and coding exclude each other");
  }
  if (schedule_->period() != 1) {
    throw std::invalid_argument(
        "push_sum needs a fixed graph (a schedule of period 1): a message's share is the "
        "sender's weight for this peer, which a time-varying schedule changes every round");
  }
  // The mean is kept only if what this peer keeps and gives away sums to 1: its column of W.
  const topology::RoundPeers mine = schedule_->round(self_, 0);
  double column = mine.self_weight;
  for (PeerId i : mine.send_to) {
    const topology::RoundPeers theirs = schedule_->round(i, 0);
    const auto at = std::find(theirs.receive_from.begin(), theirs.receive_from.end(), self_);
    if (at != theirs.receive_from.end()) {
      column += theirs.receive_weights[static_cast<std::size_t>(at - theirs.receive_from.begin())];
    }
  }
  if (std::abs(column - 1.0) > 1e-6) {
    std::ostringstream message;
    message << "push_sum needs column-stochastic weights, but peer " << self_
            << "'s column of W sums to " << column
            << " (weights = \"uniform\" on an irregular graph, or a weights file whose columns "
               "do not sum to 1): the models would not keep their mean";
    throw std::invalid_argument(message.str());
  }
}

Params PeerProtocol::debiased_model() const {
  if (!config_.push_sum) return x_;
  const auto x = x_->values();
  const float w = x.back();
  std::vector<float> z(x.size() - 1);
  for (std::size_t p = 0; p < z.size(); ++p) z[p] = x[p] / w;
  return make_params(std::move(z));
}

double PeerProtocol::push_sum_weight() const {
  return config_.push_sum ? static_cast<double>(x_->values().back()) : 1.0;
}

// A neighbour's share of a message: its weight W_ij (fixed, the schedule has period 1).
double PeerProtocol::pending_push_sum_weight() const {
  double pending = 0;
  const topology::RoundPeers round = schedule_->round(self_, 0);
  for (std::size_t r = 0; r < round.receive_from.size(); ++r) {
    for (const auto& [tag, mass] :
         slots_[static_cast<std::size_t>(slot_of(round.receive_from[r]))].masses) {
      pending += round.receive_weights[r] * static_cast<double>(mass->values().back());
    }
  }
  return pending;
}

void PeerProtocol::keep_mass(Slot& slot, std::int64_t tag, const Params& params) {
  slot.masses.emplace_back(tag, params);
  if (slot.masses.size() <= max_masses_) return;
  // A neighbour far ahead: its two newest models become one mass, added with the newer tag.
  auto newest = std::move(slot.masses.back());
  slot.masses.pop_back();
  auto& older = slot.masses.back();
  std::vector<float> sum(older.second->values().begin(), older.second->values().end());
  const auto add = newest.second->values();
  for (std::size_t p = 0; p < sum.size(); ++p) sum[p] += add[p];
  older = {newest.first, make_params(std::move(sum))};
}

// A push-sum peer that receives nothing (its in-neighbours finished or left) still gives its
// shares away: w shrinks geometrically and would underflow to 0, making x / w NaN. Before
// that, x and w are scaled by 2^64: exact, x / w unchanged. The weights then no longer sum
// to n, which no peer still mixing can notice.
void PeerProtocol::keep_weight_normal(std::span<float> next) {
  constexpr float kSmallest = 0x1p-100f, kScale = 0x1p64f;
  if (!(next.back() < kSmallest)) return;
  for (float& v : next) v *= kScale;
}

// Push-sum models are numerators with their weight last: disagreement is between x / w.
void PeerProtocol::observe_debiased_disagreement(
    std::span<const float> own, const std::vector<std::span<const float>>& models) {
  auto debiased = [](std::span<const float> x) {
    std::vector<float> z(x.begin(), x.end() - 1);
    for (float& v : z) v /= x.back();
    return z;
  };
  const std::vector<float> own_z = debiased(own);
  std::vector<std::vector<float>> kept;
  std::vector<std::span<const float>> spans;
  for (const auto& m : models) kept.push_back(debiased(m));
  for (const auto& z : kept) spans.emplace_back(z);
  policy_->observe_disagreement(neighbourhood_disagreement(own_z, spans));
}

std::vector<std::pair<float, Params>> PeerProtocol::take_masses(IterationRecord& record) {
  std::vector<std::pair<float, Params>> taken;
  for (std::size_t r = 0; r < round_slots_.size(); ++r) {
    auto& masses = slots_[static_cast<std::size_t>(round_slots_[r])].masses;
    const auto weight = static_cast<float>(round_.receive_weights[r]);
    bool used = false;
    // full adds exactly the tag-k messages (D-PSGD, the same bits in every runtime); the
    // backup policies add whatever came, so mass from a neighbour far ahead is not held back
    // until this peer reaches its tags (meanwhile its weight would shrink to nothing).
    const bool exact = policy_->mixes_exact_iteration();
    while (!masses.empty() && (!exact || masses.front().first <= k_)) {
      taken.emplace_back(weight, std::move(masses.front().second));
      record.used_tags.push_back(masses.front().first);
      record.used_weights.push_back(weight);
      masses.pop_front();
      used = true;
    }
    if (used) record.used.push_back(round_.receive_from[r]);
  }
  return taken;
}

int PeerProtocol::slot_of(PeerId peer) const {
  const auto it = std::lower_bound(neighbours_.begin(), neighbours_.end(), peer);
  if (it == neighbours_.end() || *it != peer) return -1;
  return static_cast<int>(it - neighbours_.begin());
}

bool PeerProtocol::gone(const Slot& slot, double now_s) const {
  if (slot.departed || slot.parted) return true;
  // ad_psgd: only the partner whose reply is awaited is expected to speak.
  if (averaging_ && (!averaging_->awaited() ||
                     &slot != &slots_[static_cast<std::size_t>(slot_of(*averaging_->awaited()))])) {
    return false;
  }
  return config_.silence_timeout_s > 0 && now_s - slot.last_heard_s >= config_.silence_timeout_s;
}

bool PeerProtocol::fresh(const Slot& slot) const {
  return slot.tag >= 0 && slot.tag >= k_ - config_.staleness;
}

const Params& PeerProtocol::mixed(const Slot& slot) const {
  const bool exact = policy_->mixes_exact_iteration();
  const bool usable = slot.oldest_fresh && slot.oldest_fresh_tag >= k_ - config_.staleness;
  return exact && usable ? slot.oldest_fresh : slot.params;
}

void PeerProtocol::resume_at(std::int64_t iteration) {
  if (phase_ != Phase::kNotStarted) throw std::logic_error("PeerProtocol: resumed once started");
  if (const auto why = why_no_comeback(config_, Comeback::kFromCheckpoint)) {
    throw std::invalid_argument(*why);
  }
  if (iteration < 0 || iteration > config_.iterations) {
    throw std::invalid_argument("PeerProtocol: cannot resume at iteration " +
                                std::to_string(iteration) + " of a run of " +
                                std::to_string(config_.iterations));
  }
  k_ = iteration;
}

void PeerProtocol::start(double now_s, Actions& out) {
  if (phase_ != Phase::kNotStarted) throw std::logic_error("PeerProtocol: started twice");
  for (auto& slot : slots_) slot.last_heard_s = now_s;
  if (k_ >= config_.iterations) {
    phase_ = Phase::kFinished;
    out.push_back(Finished{k_});
    return;
  }
  phase_ = Phase::kRunning;
  if (k_ > 0) refresh_oldest_fresh();  // models kept from the start-up of a resumed peer
  begin_iteration(now_s, out);
}

void PeerProtocol::join(double now_s, Actions& out) {
  if (phase_ != Phase::kNotStarted) throw std::logic_error("PeerProtocol: started twice");
  if (const auto why = why_no_comeback(config_, Comeback::kJoining)) {
    throw std::invalid_argument(*why);
  }
  for (auto& slot : slots_) slot.last_heard_s = now_s;
  phase_ = Phase::kJoining;
  if (config_.silence_timeout_s > 0) {
    join_until_s_ = now_s + config_.silence_timeout_s;
    arm(*join_until_s_, out);
  }
  try_join(now_s, out);
}

// The model: the plain average of the newest model of each neighbour heard; the iteration:
// the newest of their tags, so that what it sends is fresh for all of them at once.
void PeerProtocol::try_join(double now_s, Actions& out) {
  std::vector<const Slot*> heard;
  for (const Slot& slot : slots_)
    if (slot.tag >= 0) heard.push_back(&slot);
  const bool all = heard.size() == slots_.size();
  const bool waited = join_until_s_ && now_s >= *join_until_s_;
  if (waited && heard.empty()) {
    // Neighbours that have finished, or are gone too, send nothing: there is no run to join.
    throw std::runtime_error("peer " + std::to_string(self_) +
                             " cannot rejoin: no neighbour sent a model within the silence "
                             "timeout (have they all finished or left?)");
  }
  if (heard.empty() || !(all || waited)) return;
  std::shared_ptr<MutableParamBuffer> mean = recycled_buffer();
  const std::span<float> values = mean->mutable_values();
  std::fill(values.begin(), values.end(), 0.0f);
  std::int64_t newest = 0;
  for (const Slot* slot : heard) {
    const auto theirs = slot->params->values();
    for (std::size_t p = 0; p < parameters_; ++p) values[p] += theirs[p];
    newest = std::max(newest, slot->tag);
  }
  const float share = 1.0f / static_cast<float>(heard.size());
  for (float& v : values) v *= share;
  x_ = std::move(mean);
  k_ = newest;
  phase_ = Phase::kRunning;
  refresh_oldest_fresh();
  begin_or_block(now_s, out);
}

std::vector<float> PeerProtocol::handle(double now_s, Input input, Actions& out) {
  using Reusable = std::vector<float>;  // only a gradient gives memory back
  const ActionHandlers dispatch{
      [&](ModelArrived& m) -> Reusable {
        on_message(now_s, m.from, m.tag, std::move(m.params), out);
        return {};
      },
      [&](CodedGradientArrived& m) -> Reusable {
        on_coded_gradient(now_s, m.from, m.tag, std::move(m.coded), out);
        return {};
      },
      [&](DifferenceArrived& m) -> Reusable {
        on_compressed(now_s, m.from, m.tag, std::move(m.difference), out);
        return {};
      },
      [&](AveragingArrived& m) -> Reusable {
        on_averaging(now_s, m.from, m.step, m.tag, std::move(m.params), out);
        return {};
      },
      [&](NeighbourLeft& m) -> Reusable {
        on_neighbour_left(now_s, m.from, out);
        return {};
      },
      [&](NeighbourBack& m) -> Reusable {
        on_neighbour_back(now_s, m.peer, out);
        return {};
      },
      [&](GradientDone& g) -> Reusable {
        return hand_over_gradient(now_s, std::move(g.gradient), g.stats, out);
      },
      [&](TimerFired&) -> Reusable {
        on_timer(now_s, out);
        return {};
      },
  };
  return std::visit(dispatch, input);
}

void PeerProtocol::on_neighbour_back(double now_s, PeerId peer, Actions& out) {
  if (averaging_) averaging_->forget(peer);  // it restarted: an open request is lost with it
  const int s = slot_of(peer);
  if (s >= 0) heard_from(slots_[static_cast<std::size_t>(s)], now_s);
  if (last_sent_ && std::binary_search(receivers_.begin(), receivers_.end(), peer)) {
    out.push_back(SendParams{{peer}, last_sent_tag_, last_sent_});
  }
  reevaluate(now_s, out);
}

void PeerProtocol::send(std::vector<PeerId> to, Params params, Actions& out) {
  last_sent_tag_ = k_;
  last_sent_ = params;
  out.push_back(SendParams{std::move(to), k_, std::move(params)});
}

void PeerProtocol::refresh_oldest_fresh() {
  for (Slot& slot : slots_) {
    if ((!slot.oldest_fresh || slot.oldest_fresh_tag < k_ - config_.staleness) && fresh(slot)) {
      slot.oldest_fresh_tag = slot.tag;
      slot.oldest_fresh = slot.params;
    }
  }
}

void PeerProtocol::begin_or_block(double now_s, Actions& out) {
  if (config_.max_gap > 0) {
    std::vector<int> lagging;
    for (PeerId j : schedule_->round(self_, k_).receive_from) {
      const int s = slot_of(j);
      const Slot& slot = slots_[static_cast<std::size_t>(s)];
      if (!gone(slot, now_s) && slot.tag < k_ - config_.max_gap) lagging.push_back(s);
    }
    if (!lagging.empty()) {
      phase_ = Phase::kGapBlocked;
      arm_silence_timer(lagging, now_s, out);
      return;
    }
  }
  phase_ = Phase::kRunning;
  begin_iteration(now_s, out);
}

void PeerProtocol::catch_up(double now_s) {
  // A coded peer that fell behind every neighbour still there would send them only stale
  // coded gradients, and since coding lets them go on without it, it would stay behind for
  // good. Like a straggler in synchronous gradient coding, it skips to the slowest
  // neighbour's iteration (docs/protocol.md §2.5): every neighbour has sent that tag, so
  // nothing it then waits for is missing.
  std::optional<std::int64_t> slowest;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (gone(slots_[s], now_s)) continue;
    if (slots_[s].tag < 0) return;  // not heard from yet: it is not ahead
    slowest = slowest ? std::min(*slowest, slots_[s].tag) : slots_[s].tag;
  }
  if (slowest && *slowest > k_) k_ = std::min(*slowest, config_.iterations - 1);
}

void PeerProtocol::begin_iteration(double now_s, Actions& out) {
  if (coded_) catch_up(now_s);
  round_ = schedule_->round(self_, k_);
  round_slots_.clear();
  std::vector<bool> already(round_.receive_from.size());
  awaitable_ = 0;
  for (std::size_t r = 0; r < round_.receive_from.size(); ++r) {
    const int s = slot_of(round_.receive_from[r]);
    round_slots_.push_back(s);
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    already[r] = fresh(slot);
    if (already[r] || !gone(slot, now_s)) ++awaitable_;
  }
  start_s_ = now_s;
  gradient_ready_ = false;
  relax_at_.reset();
  armed_at_s_.reset();
  arrivals_.begin(k_, now_s, round_.receive_from, already);
  if (averaging_) {
    begin_averaging(now_s, out);
    return;
  }

  // keep_connected: the policy chooses how many more than the tree neighbours to await.
  const auto tree_awaitable = std::count_if(tree_slots_.begin(), tree_slots_.end(), [&](int s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    return fresh(slot) || !gone(slot, now_s);
  });
  relaxed_floor_ = std::max(config_.m_min, static_cast<int>(tree_awaitable));
  PolicyInput input;
  input.iteration = k_;
  input.neighbours = awaitable_;
  input.m_min = std::min(relaxed_floor_, awaitable_);
  input.now_s = now_s;
  // With momentum mu a steady gradient moves the model by lr / (1 - mu) per iteration.
  input.learning_rate = learning_rate() / (1 - config_.optimizer.momentum);
  input.arrivals = &arrivals_;
  decision_ = policy_->decide(input);
  decision_.awaited = std::clamp(decision_.awaited, input.m_min, awaitable_);

  if (coded_) {
    // The model goes out with the coded gradients once they are computed.
    partitions_ = coded_->begin_iteration();
    gradient_point_ = x_;
    StartGradient request{k_, x_, partitions_, config_.coding.split_batch, 1.0};
    if (!config_.coding.split_batch) request.work = static_cast<double>(partitions_.size());
    out.push_back(std::move(request));
    return;
  }
  if (config_.order == UpdateOrder::kCombineThenAdapt && !round_.send_to.empty()) {
    send(round_.send_to, x_, out);
  }
  gradient_point_ = config_.push_sum ? debiased_model() : x_;
  out.push_back(
      StartGradient{k_, gradient_point_, {}, true, 1.0, policy_->wants_gradient_stats(k_)});
}

// AD-PSGD (docs/protocol.md §4.5): an active peer asks one passive neighbour still there to
// average with the model its gradient is taken at; a passive peer only computes (requests
// come to it). Silence counts from the request: a partner is expected to answer, not to talk.
void PeerProtocol::begin_averaging(double now_s, Actions& out) {
  decision_ = {};
  if (averaging_->active()) {
    std::vector<PeerId> available;
    for (std::size_t r = 0; r < round_slots_.size(); ++r) {
      // One open request per partner: a silent one is not asked again until it answers.
      const PeerId j = round_.receive_from[r];
      if (!slots_[static_cast<std::size_t>(round_slots_[r])].departed &&
          !averaging_->open_with(j)) {
        available.push_back(j);
      }
    }
    if (const auto partner = averaging_->choose(k_, available)) {
      averaging_->requested(*partner, k_, x_);
      slots_[static_cast<std::size_t>(slot_of(*partner))].last_heard_s = now_s;
      out.push_back(SendAveraging{*partner, AveragingStep::kRequest, k_, x_});
      decision_.awaited = 1;
    }
  }
  gradient_point_ = x_;
  out.push_back(StartGradient{k_, gradient_point_, {}, true, 1.0, false});
}

void PeerProtocol::on_gradient_done(double now_s, std::span<const float> gradient,
                                    const GradientStats& stats, Actions& out) {
  if (phase_ != Phase::kRunning || gradient_ready_) {
    throw std::logic_error("PeerProtocol: on_gradient_done without an outstanding gradient");
  }
  const std::size_t model_size = config_.push_sum ? parameters_ - 1 : parameters_;  // no w
  const std::size_t expected = model_size * (coded_ ? partitions_.size() : 1);
  if (gradient.size() != expected) {
    throw std::logic_error("PeerProtocol: gradient has " + std::to_string(gradient.size()) +
                           " values, expected " + std::to_string(expected));
  }
  if (!all_finite(gradient)) {
    std::ostringstream message;
    message << "peer " << self_ << ": the gradient of iteration " << k_
            << " has a NaN or infinite value: training diverged (lower optimizer.lr, now "
            << config_.optimizer.lr << ")";
    throw std::runtime_error(message.str());
  }
  if (config_.push_sum) {
    // The weight takes no step; the step is scaled by the weight (update(), ATC below).
    padded_gradient_.assign(gradient.begin(), gradient.end());
    padded_gradient_.push_back(0.0f);
    gradient = padded_gradient_;
  }
  report_departures(now_s, out);
  gradient_ready_ = true;
  gradient_done_s_ = now_s;
  arrivals_.gradient_done(k_, now_s);
  if (coded_) {
    gradient_.assign(gradient.begin(), gradient.begin() + static_cast<std::ptrdiff_t>(parameters_));
    own_for_mix_ = x_;
    coded_->observe_own_compute(now_s - start_s_);
    coded_->encode(k_, x_, round_.send_to, partitions_, gradient, now_s - start_s_, out);
    if (config_.coding.deadline_s > 0) relax_at_ = now_s + config_.coding.deadline_s;
    try_update(now_s, out);
    return;
  }
  policy_->observe_gradient(stats);
  relax_at_ = policy_->relax_at(start_s_, now_s);
  const auto lr = static_cast<float>(learning_rate());
  if (config_.order == UpdateOrder::kCombineThenAdapt) {
    if (gradient.data() != gradient_.data()) gradient_.assign(gradient.begin(), gradient.end());
    own_for_mix_ = x_;
  } else {
    if (local_step_) {
      gradient_.assign(gradient.begin(), gradient.end());
      to_direction(gradient_);
      gradient = gradient_;
    }
    const auto x = x_->values();
    std::shared_ptr<MutableParamBuffer> y = recycled_buffer();
    const std::span<float> values = y->mutable_values();
    // Push-sum: y / w = x / w - lr g (exactly lr g when the scale is 1, as without push-sum).
    const float scale = config_.push_sum ? x.back() : 1.0f;
    for (std::size_t p = 0; p < parameters_; ++p) values[p] = x[p] - lr * scale * gradient[p];
    own_for_mix_ = std::move(y);
    if (own_estimate_) {
      // The seed: a hash of (run seed, peer, iteration), the same in both runtimes.
      const std::uint64_t seed =
          learning::mix64(config_.seed ^ learning::mix64((static_cast<std::uint64_t>(self_) << 40) ^
                                                         static_cast<std::uint64_t>(k_)));
      auto difference = std::make_shared<const compression::Compressed>(
          own_estimate_->advance(*config_.compression, own_for_mix_->values(), seed));
      // Not to neighbours that said goodbye: they cannot come back to read it.
      std::vector<PeerId> to;
      for (PeerId j : round_.send_to) {
        const int s = slot_of(j);
        if (s < 0 || !slots_[static_cast<std::size_t>(s)].departed) to.push_back(j);
      }
      if (!to.empty()) out.push_back(SendCompressed{std::move(to), k_, difference});
    } else if (!round_.send_to.empty()) {
      send(round_.send_to, own_for_mix_, out);
    }
  }
  try_update(now_s, out);
}

std::vector<float> PeerProtocol::hand_over_gradient(double now_s, std::vector<float> gradient,
                                                    const GradientStats& stats, Actions& out) {
  // Only combine-then-adapt keeps the gradient whole until the update; there the vector
  // itself is kept (a model-sized copy saved per iteration) and the previous one, whose
  // update is done, is handed back.
  const bool keep = !coded_ && config_.order == UpdateOrder::kCombineThenAdapt &&
                    phase_ == Phase::kRunning && !gradient_ready_ && gradient.size() == parameters_;
  if (keep) std::swap(gradient_, gradient);
  on_gradient_done(now_s, keep ? std::span<const float>(gradient_) : gradient, stats, out);
  return gradient;
}

std::vector<float> PeerProtocol::release_gradient() {
  // Only combine-then-adapt keeps the gradient (in gradient_) until the update; after it,
  // with no gradient outstanding, nothing reads it again.
  // Push-sum keeps the gradient with one value more (the weight's 0): no use to the runtime.
  if (coded_ || config_.push_sum || config_.order != UpdateOrder::kCombineThenAdapt ||
      gradient_ready_) {
    return {};
  }
  return std::exchange(gradient_, {});
}

void PeerProtocol::on_coded_gradient(double now_s, PeerId from, std::int64_t tag, CodedPart coded,
                                     Actions& out) {
  const int s = slot_of(from);
  // A part that names no block of this neighbourhood has no length to check against: it is
  // not in the code (after the neighbour, tag and value checks).
  const bool names_a_block = coded && coded_ && coded_->block_index(coded->covers) >= 0;
  std::size_t size = parameters_;
  if (names_a_block) {
    size = coded_->message_size(coded->covers, parameters_);
  } else if (coded && coded->gradient) {
    size = coded->gradient->values().size();
  }
  std::optional<DropCause> cause = unusable(from, tag, coded ? coded->gradient : nullptr, size);
  if (!cause && (!coded_ || !coded_->valid(from, *coded, parameters_))) {
    cause = DropCause::kNotInTheCode;
  }
  if (cause) {
    dropped_.add(*cause);
    return;
  }
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  heard_from(slot, now_s);
  if (tag > slot.coded_tag) {  // an older one (reordered, duplicated) teaches nothing
    slot.bytes_since_update +=
        static_cast<std::int64_t>(coded->gradient->values().size() * sizeof(float));
    coded_->learn(from, *coded);
    slot.coded = std::move(coded);
    slot.coded_tag = tag;
  }
  reevaluate(now_s, out);
}

void PeerProtocol::on_compressed(double now_s, PeerId from, std::int64_t tag,
                                 CompressedPart difference, Actions& out) {
  const int s = slot_of(from);
  std::optional<DropCause> cause;
  if (s < 0) {
    cause = DropCause::kNotNeighbour;
  } else if (!own_estimate_) {
    cause = DropCause::kBadDifference;  // this run sends models, not differences
  } else if (tag < 0 || tag >= config_.iterations) {
    cause = DropCause::kTagOutOfRange;
  } else if (!difference || difference->length != parameters_) {
    cause = DropCause::kWrongSize;
  } else if (compression::invalid(*difference) ||
             tag <= slots_[static_cast<std::size_t>(s)].difference_tag) {
    cause = DropCause::kBadDifference;  // malformed, or a repeat: harmless to drop
  } else if (tag > slots_[static_cast<std::size_t>(s)].difference_tag + 1) {
    dropped_.add(DropCause::kBadDifference);
    part_from(slots_[static_cast<std::size_t>(s)]);
    reevaluate(now_s, out);  // reports it gone, and stops waiting for it
    return;
  }
  if (cause) {
    dropped_.add(*cause);
    return;
  }
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  heard_from(slot, now_s);
  arrivals_.message(from, tag, now_s);
  slot.bytes_since_update += static_cast<std::int64_t>(difference->payload_bytes());
  slot.difference_tag = tag;
  slot.differences.emplace_back(tag, std::move(difference));
  slot.tag = tag;
  // Under full a neighbour leads by less than n iterations, so the update of each iteration
  // still applies exactly that iteration's differences; one leading by more (it does not wait
  // for this peer) has its oldest applied now, which keeps the queue bounded.
  while (slot.differences.size() > static_cast<std::size_t>(schedule_->size())) {
    estimates_[static_cast<std::size_t>(s)].apply(*slot.differences.front().second);
    slot.differences.pop_front();
  }
  reevaluate(now_s, out);
}

// A gap in a neighbour's differences (the transport lost one: a connection reset) parts this
// peer's copy of its estimate from every other for good. Mixing it would move mass and pull
// toward a model nobody has, and waiting would wait for ever: it is gone, reported as such.
void PeerProtocol::part_from(Slot& slot) {
  if (slot.parted) return;
  slot.parted = true;
  slot.reported_gone = false;
  unreported_departure_ = true;
}

std::span<const float> PeerProtocol::public_estimate(PeerId peer) const {
  if (!own_estimate_) return {};
  if (peer == self_) return own_estimate_->value();
  const int s = slot_of(peer);
  return s < 0 ? std::span<const float>{} : estimates_[static_cast<std::size_t>(s)].value();
}

std::vector<MixTerm> PeerProtocol::estimate_terms(double now_s) {
  std::vector<MixTerm> terms;
  const auto gamma = config_.consensus_step;
  float total = 0;
  for (std::size_t r = 0; r < round_slots_.size(); ++r) {
    const auto s = static_cast<std::size_t>(round_slots_[r]);
    Slot& slot = slots_[s];
    while (!slot.differences.empty() && slot.differences.front().first <= k_) {
      estimates_[s].apply(*slot.differences.front().second);
      slot.differences.pop_front();
    }
    // A neighbour gone before sending this iteration's difference (it died, or left early)
    // pulls no more: its estimate is frozen. One that finished has sent them all.
    if (slot.parted || (gone(slot, now_s) && slot.difference_tag < k_)) continue;
    const auto weight = static_cast<float>(gamma * round_.receive_weights[r]);
    total += weight;
    terms.push_back({weight, estimates_[s].value()});
  }
  // Exactly minus the coefficients above, so that equal estimates cancel to the last bit.
  terms.push_back({-total, own_estimate_->value()});
  return terms;
}

void PeerProtocol::on_message(double now_s, PeerId from, std::int64_t tag, Params params,
                              Actions& out) {
  if (const auto cause = unusable(from, tag, params, parameters_)) {
    dropped_.add(*cause);
    return;
  }
  const int s = slot_of(from);
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  heard_from(slot, now_s);
  arrivals_.message(from, tag, now_s);
  if (tag > slot.tag) {  // a repeated or reordered old one is no news
    slot.bytes_since_update += static_cast<std::int64_t>(params->values().size() * sizeof(float));
  }
  if (tag >= k_ - config_.staleness && slot.oldest_fresh_tag < k_ - config_.staleness) {
    slot.oldest_fresh_tag = tag;
    slot.oldest_fresh = params;
  }
  if (tag > slot.tag) {
    if (config_.push_sum) keep_mass(slot, tag, params);  // a repeated tag would add it twice
    slot.tag = tag;
    slot.params = std::move(params);
  }
  reevaluate(now_s, out);
}

// Tags at or past the run's length come from no peer of this run: a huge tag would stay
// "newest" (and fresh) for the rest of the run. A single NaN mixed in would make this
// model, and through it every model of the run, NaN for good.
std::optional<DropCause> PeerProtocol::unusable(PeerId from, std::int64_t tag, const Params& params,
                                                std::size_t size) const {
  if (slot_of(from) < 0) return DropCause::kNotNeighbour;
  if (tag < 0 || tag >= config_.iterations) return DropCause::kTagOutOfRange;
  if (!params || params->values().size() != size) return DropCause::kWrongSize;
  if (!all_finite(params->values())) return DropCause::kNonFinite;
  return std::nullopt;
}

void PeerProtocol::on_averaging(double now_s, PeerId from, AveragingStep step, std::int64_t tag,
                                Params params, Actions& out) {
  const bool request = step == AveragingStep::kRequest;
  std::optional<DropCause> cause;
  if (slot_of(from) < 0) {
    cause = DropCause::kNotNeighbour;
  } else if (tag < 0 || tag >= config_.iterations) {
    cause = DropCause::kTagOutOfRange;
  } else if (!averaging_ || averaging_->active() == request ||
             averaging_->is_active(from) != request) {
    cause = DropCause::kNotAsked;  // requests go from active to passive peers, replies back
  } else if ((request && !params) || (params && params->values().size() != parameters_)) {
    cause = DropCause::kWrongSize;
  } else if (params && !all_finite(params->values())) {
    cause = DropCause::kNonFinite;
  } else if (!request && !averaging_->take_reply(
                             from, tag, params ? params->values() : std::span<const float>{})) {
    cause = DropCause::kNotAsked;
  }
  if (cause) {
    dropped_.add(*cause);
    return;
  }
  Slot& slot = slots_[static_cast<std::size_t>(slot_of(from))];
  // A reply or decline after the neighbour's BYE is the last word of a peer that left: it must
  // not bring it back to be asked again (a restart does, through on_neighbour_back).
  if (slot.departed) {
    slot.last_heard_s = now_s;
  } else {
    heard_from(slot, now_s);
  }
  slot.tag = std::max(slot.tag, tag);
  if (params) slot.bytes_since_update += static_cast<std::int64_t>(parameters_ * sizeof(float));
  if (request) answer_request(slot, from, tag, params, out);
  if (phase_ == Phase::kFinished || phase_ == Phase::kStopped) {
    settle_averages();  // no update will come to add it
    return;
  }
  reevaluate(now_s, out);
}

void PeerProtocol::stop() {
  if (phase_ == Phase::kRunning || phase_ == Phase::kGapBlocked || phase_ == Phase::kJoining) {
    phase_ = Phase::kStopped;
  }
  settle_averages();
}

// The replies' halves taken and not yet added, added without a step: the partners have
// applied theirs, and the sum of the models must hold at the end too.
void PeerProtocol::settle_averages() {
  if (!averaging_) return;
  averaging_->take_answered();
  const std::vector<float> difference = averaging_->take_difference();
  if (difference.empty()) return;
  std::shared_ptr<MutableParamBuffer> next = recycled_buffer();
  mix_and_step(next->mutable_values(), 1.0f, x_->values(), {{1.0f, difference}}, 0.0f, {});
  x_ = std::move(next);
}

// A passive peer averages at once, whatever it is doing: the gradient it is computing was
// taken at the model before, as in AD-PSGD. Before its start, while joining and once
// finished its model is not in play, and it declines.
void PeerProtocol::answer_request(Slot& slot, PeerId from, std::int64_t tag, const Params& theirs,
                                  Actions& out) {
  if (phase_ != Phase::kRunning && phase_ != Phase::kGapBlocked) {  // not started, stopped
    out.push_back(SendAveraging{from, AveragingStep::kReply, tag, nullptr});
    return;
  }
  // Both from the buffer source: the real runtime's shared memory, which a reply to a peer
  // on this machine then travels in, like a model.
  std::shared_ptr<MutableParamBuffer> next = recycled_buffer();
  std::shared_ptr<MutableParamBuffer> reply = recycled_buffer();
  PairwiseAveraging::answer(x_->values(), theirs->values(), next->mutable_values(),
                            reply->mutable_values());
  x_ = std::move(next);
  averaged_with_.emplace_back(from, tag);
  slot.last_reply = reply;
  out.push_back(SendAveraging{from, AveragingStep::kReply, tag, std::move(reply)});
}

void PeerProtocol::on_timer(double now_s, Actions& out) {
  if (armed_at_s_ && now_s >= *armed_at_s_) armed_at_s_.reset();
  reevaluate(now_s, out);
}

void PeerProtocol::on_neighbour_left(double now_s, PeerId peer, Actions& out) {
  const int s = slot_of(peer);
  if (s < 0) return;
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  // A BYE after a reported silence is a departure of its own.
  if (!slot.departed) slot.reported_gone = false;
  slot.departed = true;
  unreported_departure_ = true;
  reevaluate(now_s, out);
}

void PeerProtocol::heard_from(Slot& slot, double now_s) {
  slot.last_heard_s = now_s;
  slot.departed = false;
  slot.reported_gone = false;
}

void PeerProtocol::report_departures(double now_s, Actions& out) {
  if (phase_ == Phase::kNotStarted) return;  // silence counts from start()
  // Without a silence timeout only a BYE makes a departure: nothing to look for otherwise
  // (the simulator's case, on every event).
  if (config_.silence_timeout_s <= 0 && !unreported_departure_) return;
  unreported_departure_ = false;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    if (slot.reported_gone || !gone(slot, now_s)) continue;
    slot.reported_gone = true;
    out.push_back(NeighbourGone{neighbours_[s], k_, slot.departed, slot.parted && !slot.departed});
  }
}

void PeerProtocol::reevaluate(double now_s, Actions& out) {
  report_departures(now_s, out);
  if (phase_ == Phase::kGapBlocked) {
    begin_or_block(now_s, out);
  } else if (phase_ == Phase::kJoining) {
    try_join(now_s, out);
  } else if (phase_ == Phase::kRunning) {
    try_update(now_s, out);
  }
}

bool PeerProtocol::usable_coded(const Slot& slot) const {
  return slot.coded && slot.coded_tag >= k_ - config_.staleness;
}

std::vector<CodedNeighbourhood::Share> PeerProtocol::usable_shares() const {
  std::vector<CodedNeighbourhood::Share> shares;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    if (usable_coded(slot)) shares.push_back({neighbours_[s], slot.coded_tag, slot.coded.get()});
  }
  return shares;
}

void PeerProtocol::try_update_coded(double now_s, Actions& out) {
  // Step once every block of the neighbourhood is covered, or the deadline passed, or nobody
  // is left who could still cover a missing block.
  const auto& blocks = coded_->blocks();
  const auto shares = usable_shares();
  const std::vector<bool> covered = coded_->covered(shares);
  // Per block: shares in hand, and members still to hear from.
  std::vector<int> have(blocks.size(), 0), pending(blocks.size(), 0);
  for (const auto& share : shares) {
    ++have[static_cast<std::size_t>(coded_->block_index(share.coded->covers))];
  }
  std::vector<std::pair<int, std::size_t>> candidates;  // (slot, its block)
  for (int s : round_slots_) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (usable_coded(slot) || gone(slot, now_s)) continue;
    const PeerId j = neighbours_[static_cast<std::size_t>(s)];
    const auto b = static_cast<std::size_t>(coded_->block_index(coding::block_of(blocks, j)));
    candidates.emplace_back(s, b);
    ++pending[b];
  }
  std::vector<int> waiting_for;
  for (const auto& [s, b] : candidates) {
    // With dynamic roles anyone may cover any block; otherwise only the block's members, and
    // only while enough of them are left to cover it.
    const bool can_cover =
        !covered[b] && have[b] + pending[b] >= coded_->needed(static_cast<int>(b));
    if (config_.coding.dynamic_roles || can_cover) waiting_for.push_back(s);
  }
  const bool decodable = std::all_of(covered.begin(), covered.end(), [](bool c) { return c; });
  const bool past_deadline = relax_at_ && now_s >= *relax_at_;
  if (!decodable && !past_deadline && !waiting_for.empty()) {
    if (relax_at_) arm(*relax_at_, out);
    arm_silence_timer(waiting_for, now_s, out);
    return;
  }
  std::vector<int> used;
  for (std::size_t r = 0; r < round_slots_.size(); ++r) {
    if (fresh(slots_[static_cast<std::size_t>(round_slots_[r])]))
      used.push_back(static_cast<int>(r));
  }
  update(now_s, used, static_cast<int>(used.size()), out);
}

void PeerProtocol::decode_neighbourhood(IterationRecord& record) {
  decoded_.resize(parameters_);
  const CodedNeighbourhood::Decoded d = coded_->decode(gradient_, usable_shares(), decoded_);
  record.partitions_computed = static_cast<int>(partitions_.size());
  record.decodable = d.decodable;
  record.coded_members = d.members;
  record.decode_residual = d.residual;
  coded_->plan_roles();
}

void PeerProtocol::try_update_averaging(double now_s, Actions& out) {
  if (const auto partner = averaging_->awaited()) {
    const int s = slot_of(*partner);
    if (!gone(slots_[static_cast<std::size_t>(s)], now_s)) {
      arm_silence_timer(std::span<const int>(&s, 1), now_s, out);
      return;
    }
    averaging_->give_up();
  }
  update(now_s, {}, decision_.awaited, out);
}

void PeerProtocol::try_update(double now_s, Actions& out) {
  if (!gradient_ready_) return;
  if (averaging_) {
    try_update_averaging(now_s, out);
    return;
  }
  if (coded_) {
    try_update_coded(now_s, out);
    return;
  }
  std::vector<int> used;     // indices into round_.receive_from
  std::vector<int> pending;  // slots that may still deliver
  for (std::size_t r = 0; r < round_slots_.size(); ++r) {
    const Slot& slot = slots_[static_cast<std::size_t>(round_slots_[r])];
    if (slot.parted) continue;  // its estimate here is no longer its own: not mixed, not counted
    if (fresh(slot)) {
      used.push_back(static_cast<int>(r));
    } else if (!gone(slot, now_s)) {
      pending.push_back(round_slots_[r]);
    }
  }
  int required = decision_.awaited;
  const bool relaxed = relax_at_ && now_s >= *relax_at_;
  if (relaxed) required = std::min(required, relaxed_floor_);
  required = std::min(required, static_cast<int>(used.size() + pending.size()));
  const std::vector<int> tree_missing = missing_tree_neighbours(now_s);
  if (static_cast<int>(used.size()) < required || !tree_missing.empty()) {
    if (relax_at_ && !relaxed) arm(*relax_at_, out);
    arm_silence_timer(pending, now_s, out);
    return;
  }
  update(now_s, used, required, out);
}

std::vector<int> PeerProtocol::missing_tree_neighbours(double now_s) const {
  std::vector<int> missing;
  for (int s : tree_slots_) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (!fresh(slot) && !gone(slot, now_s)) missing.push_back(s);
  }
  return missing;
}

void PeerProtocol::arm(double at_s, Actions& out) {
  if (armed_at_s_ && *armed_at_s_ <= at_s) return;  // an earlier timer will re-evaluate
  armed_at_s_ = at_s;
  out.push_back(ArmTimer{at_s});
}

void PeerProtocol::arm_silence_timer(std::span<const int> slots, double now_s, Actions& out) {
  if (config_.silence_timeout_s <= 0 || slots.empty()) return;
  double earliest = slots_[static_cast<std::size_t>(slots[0])].last_heard_s;
  for (int s : slots)
    earliest = std::min(earliest, slots_[static_cast<std::size_t>(s)].last_heard_s);
  arm(std::max(now_s, earliest + config_.silence_timeout_s), out);
}

std::shared_ptr<MutableParamBuffer> PeerProtocol::recycled_buffer() {
  if (buffer_source_) {
    if (auto buffer = buffer_source_()) {
      if (buffer->values().size() != parameters_) {
        throw std::logic_error("PeerProtocol: the buffer source gave " +
                               std::to_string(buffer->values().size()) + " values, expected " +
                               std::to_string(parameters_));
      }
      return buffer;
    }
  }
  // A buffer nobody else holds any more (neighbours' mailboxes, sends in flight) is
  // overwritten instead of allocating and zero-filling a fresh model every iteration.
  for (auto& buffer : spare_buffers_) {
    if (buffer.use_count() == 1) {
      // The last other holder may have let go on another thread (a zero-copy send): this
      // fence pairs with the release in its reference-count decrement.
      std::atomic_thread_fence(std::memory_order_acquire);
      return buffer;
    }
  }
  auto buffer = std::make_shared<VectorParams>(std::vector<float>(parameters_));
  if (spare_buffers_.size() < kMaxSpareBuffers) spare_buffers_.push_back(buffer);
  return buffer;
}

void PeerProtocol::record_neighbours(IterationRecord& record) {
  const auto delays = arrivals_.delays(k_);
  for (std::size_t r = 0; r < round_.receive_from.size(); ++r) {
    Slot& slot = slots_[static_cast<std::size_t>(round_slots_[r])];
    NeighbourRecord n;
    n.neighbour = round_.receive_from[r];
    if (r < delays.size() && delays[r]) n.arrival_s = start_s_ + *delays[r] - gradient_done_s_;
    const auto u = std::find(record.used.begin(), record.used.end(), n.neighbour);
    n.used = u != record.used.end();
    // Push-sum's used_tags list every mass added, not one per neighbour: its newest tag.
    std::int64_t tag = slot.tag;
    if (n.used && !config_.push_sum) {
      tag = record.used_tags[static_cast<std::size_t>(u - record.used.begin())];
    }
    if (tag >= 0) n.tag_lag = static_cast<double>(k_ - tag);
    n.bytes = std::exchange(slot.bytes_since_update, 0);
    record.neighbour_records.push_back(n);
  }
}

double PeerProtocol::learning_rate() const {
  return learning::learning_rate(config_.optimizer, k_, config_.iterations);
}

void PeerProtocol::to_direction(std::span<float> step) {
  const std::span<const float> at = gradient_point_->values();
  local_step_->direction(at, step.first(at.size()));
}

std::vector<float> PeerProtocol::take_averages(IterationRecord& record) {
  const auto partners =
      averaging_->active() ? averaging_->take_answered() : std::exchange(averaged_with_, {});
  for (const auto& [peer, tag] : partners) {
    record.used.push_back(peer);
    record.used_tags.push_back(tag);
    record.used_weights.push_back(0.5);
  }
  return averaging_->take_difference();
}

void PeerProtocol::update(double now_s, const std::vector<int>& used, int required, Actions& out) {
  // Push-sum keeps its own share and adds every mass received (no renormalisation: what is
  // not here yet is added when it comes). ad_psgd keeps its model, averaged already or to
  // be by the replies' differences.
  const SubsetRow row = averaging_         ? SubsetRow{1.0, {}}
                        : config_.push_sum ? SubsetRow{round_.self_weight, {}}
                                           : subset_row(round_.receive_weights, round_.self_weight,
                                                        used, config_.renormalisation);
  // ad_psgd: a passive peer's model may have been averaged since its gradient was done.
  const auto own = (averaging_ ? x_ : own_for_mix_)->values();
  std::shared_ptr<MutableParamBuffer> next_buffer = recycled_buffer();
  const std::span<float> next = next_buffer->mutable_values();
  IterationRecord record;
  record.used_weights = row.weights;
  record.self_weight = row.self_weight;
  std::vector<MixTerm> terms;
  const auto masses = config_.push_sum ? take_masses(record) : decltype(take_masses(record)){};
  for (const auto& [weight, mass] : masses) terms.push_back({weight, mass->values()});
  const std::vector<float> difference = averaging_ ? take_averages(record) : std::vector<float>{};
  if (!difference.empty()) terms.push_back({1.0f, difference});
  const bool estimates = own_estimate_.has_value();
  if (estimates) terms = estimate_terms(now_s);
  if (estimates) {  // the stepped model's weight is 1; the estimates' are gamma w_ij
    record.used_weights.clear();
    record.self_weight = 1.0;
  }
  for (std::size_t u = 0; u < used.size() && !config_.push_sum; ++u) {
    if (estimates) {  // telemetry only: the mix above takes every neighbour's estimate
      const auto r = static_cast<std::size_t>(used[u]);
      record.used.push_back(round_.receive_from[r]);
      record.used_tags.push_back(slots_[static_cast<std::size_t>(round_slots_[r])].tag);
      record.used_weights.push_back(config_.consensus_step * round_.receive_weights[r]);
      continue;
    }
    const Slot& slot =
        slots_[static_cast<std::size_t>(round_slots_[static_cast<std::size_t>(used[u])])];
    const Params& params = mixed(slot);
    terms.push_back({static_cast<float>(row.weights[u]), params->values()});
    record.used.push_back(round_.receive_from[static_cast<std::size_t>(used[u])]);
    record.used_tags.push_back(params == slot.params ? slot.tag : slot.oldest_fresh_tag);
  }
  // Push-sum is charged per neighbour whose masses it adds (as it always was), not per mass.
  record.terms_mixed = static_cast<int>(config_.push_sum ? record.used.size() : terms.size());
  if (coded_) decode_neighbourhood(record);
  std::span<const float> step;  // ATC: the models mixed already stepped
  if (config_.order == UpdateOrder::kCombineThenAdapt) {
    std::vector<float>& gradient = coded_ ? decoded_ : gradient_;
    if (local_step_) to_direction(gradient);
    step = gradient;
  }
  const auto lr = static_cast<float>(learning_rate());
  if (config_.push_sum && !step.empty()) {
    // Push-sum, combine-then-adapt: mix first, then step by lr w(k+1) g, so that the
    // de-biased model x(k+1) / w(k+1) moves by lr g whatever the weight became: with plain
    // g a peer whose in-neighbours were skipped (its weight shrinking to its own share each
    // iteration) would step by lr g / w and diverge.
    mix_and_step(next, static_cast<float>(row.self_weight), own, terms, 0.0f, {});
    const float scale = lr * next.back();
    for (std::size_t p = 0; p + 1 < next.size(); ++p) next[p] -= scale * step[p];
  } else {
    // Compressed gossip keeps all of x_half and adds gamma times the estimates' differences.
    mix_and_step(next, estimates ? 1.0f : static_cast<float>(row.self_weight), own, terms, lr,
                 step);
  }
  if (config_.push_sum) keep_weight_normal(next);

  // nu2 costs a pass over the models mixed: measured every disagreement_every iterations
  // (it changes slowly, and the policy smooths it anyway), so it costs next to nothing.
  if (policy_->wants_disagreement() && !used.empty() &&
      k_ % config_.policy.disagreement_every == 0) {
    std::vector<std::span<const float>> models;
    for (int u : used) {
      const auto s = static_cast<std::size_t>(round_slots_[static_cast<std::size_t>(u)]);
      // Compressed gossip knows its neighbours' models by their public estimates.
      models.push_back(estimates ? estimates_[s].value() : mixed(slots_[s])->values());
    }
    if (estimates) {
      policy_->observe_disagreement(neighbourhood_disagreement(own_estimate_->value(), models));
    } else if (config_.push_sum) {
      observe_debiased_disagreement(own, models);
    } else {
      policy_->observe_disagreement(neighbourhood_disagreement(own, models));
    }
  }

  record.peer = self_;
  record.iteration = k_;
  record.neighbours = static_cast<int>(round_.receive_from.size());
  record.awaitable = awaitable_;
  record.awaited = decision_.awaited;
  record.required = required;
  record.backups = record.neighbours - decision_.awaited;
  record.start_s = start_s_;
  record.gradient_done_s = gradient_done_s_;
  record.update_s = now_s;
  record.estimates = decision_.estimates;
  record_neighbours(record);
  out.push_back(IterationCompleted{std::move(record)});

  x_ = std::move(next_buffer);
  own_for_mix_.reset();
  ++k_;
  refresh_oldest_fresh();
  if (k_ >= config_.iterations) {
    phase_ = Phase::kFinished;
    out.push_back(Finished{k_});
    return;
  }
  begin_or_block(now_s, out);
}

}  // namespace fastk::consensus
