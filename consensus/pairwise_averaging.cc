#include "consensus/pairwise_averaging.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "learning/random.h"
#include "topology/two_sides.h"

namespace fastk::consensus {

PairwiseAveraging::PairwiseAveraging(PeerId self, const topology::TopologySchedule& schedule,
                                     std::uint64_t seed, std::size_t parameters)
    : self_(self), sides_(sides_of(schedule)), seed_(seed), parameters_(parameters) {
  active_ = sides_[static_cast<std::size_t>(self_)];
}

std::vector<bool> PairwiseAveraging::sides_of(const topology::TopologySchedule& schedule) {
  const topology::Graph* graph = schedule.fixed_graph();
  if (!graph) {
    throw std::invalid_argument(
        "consensus.policy = \"ad_psgd\" needs a fixed undirected graph: its active and passive "
        "peers are the two sides of one graph (not one_peer_exponential, not directed)");
  }
  topology::TwoSides sides = topology::two_sides(*graph);
  if (sides.conflict) {
    throw std::invalid_argument(
        "consensus.policy = \"ad_psgd\" needs a bipartite graph (no cycle of odd length), so "
        "that active peers only average with passive ones and no two averages cross; peers " +
        std::to_string(sides.conflict->a) + " and " + std::to_string(sides.conflict->b) +
        " are neighbours on the same side (a ring needs an even number of peers; a torus, even "
        "sides; a hypercube always works)");
  }
  return std::move(sides.active);
}

std::optional<PeerId> PairwiseAveraging::choose(std::int64_t k,
                                                const std::vector<PeerId>& available) const {
  if (available.empty()) return std::nullopt;
  using learning::mix64;
  const std::uint64_t h = mix64(
      seed_ ^ mix64(static_cast<std::uint64_t>(self_) ^ mix64(static_cast<std::uint64_t>(k))));
  return available[static_cast<std::size_t>(h % available.size())];
}

void PairwiseAveraging::requested(PeerId partner, std::int64_t tag, Params model) {
  open_.push_back({partner, tag, std::move(model)});
  awaited_ = partner;
  awaited_tag_ = tag;
}

bool PairwiseAveraging::open_with(PeerId partner) const {
  return std::any_of(open_.begin(), open_.end(),
                     [&](const Open& o) { return o.partner == partner; });
}

void PairwiseAveraging::forget(PeerId partner) {
  std::erase_if(open_, [&](const Open& o) { return o.partner == partner; });
  if (awaited_ == partner) awaited_.reset();
}

bool PairwiseAveraging::take_reply(PeerId from, std::int64_t tag, std::span<const float> reply) {
  const auto it = std::find_if(open_.begin(), open_.end(),
                               [&](const Open& o) { return o.partner == from && o.tag == tag; });
  if (it == open_.end()) return false;
  if (!reply.empty() && reply.size() != parameters_) return false;
  open_.erase(it);
  if (awaited_ == from && awaited_tag_ == tag) awaited_.reset();
  if (reply.empty()) return true;  // declined: nothing to add
  if (difference_.empty()) {
    difference_.assign(reply.begin(), reply.end());
  } else {
    for (std::size_t p = 0; p < parameters_; ++p) difference_[p] += reply[p];
  }
  answered_.emplace_back(from, tag);
  return true;
}

std::vector<float> PairwiseAveraging::take_difference() { return std::exchange(difference_, {}); }

std::vector<std::pair<PeerId, std::int64_t>> PairwiseAveraging::take_answered() {
  return std::exchange(answered_, {});
}

void PairwiseAveraging::answer(std::span<const float> mine, std::span<const float> theirs,
                               std::span<float> next, std::span<float> reply) {
  for (std::size_t p = 0; p < mine.size(); ++p) {
    reply[p] = (mine[p] - theirs[p]) * 0.5f;
    next[p] = mine[p] - reply[p];
  }
}

}  // namespace fastk::consensus
