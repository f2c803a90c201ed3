#include "topology/schedule.h"

#include <set>
#include <stdexcept>

#include "topology/spanning_tree.h"

namespace fastk::topology {

MixingMatrix TopologySchedule::matrix(std::int64_t k) const {
  const int n = size();
  std::vector<Eigen::Triplet<double>> entries;
  for (PeerId i = 0; i < n; ++i) {
    RoundPeers r = round(i, k);
    entries.emplace_back(i, i, r.self_weight);
    for (std::size_t x = 0; x < r.receive_from.size(); ++x) {
      entries.emplace_back(i, r.receive_from[x], r.receive_weights[x]);  // repeats are summed
    }
  }
  MixingMatrix w(n, n);
  w.setFromTriplets(entries.begin(), entries.end());
  return w;
}

std::vector<PeerId> peers_over_rounds(const TopologySchedule& schedule, PeerId peer, bool receive) {
  std::set<PeerId> peers;
  for (int r = 0; r < schedule.period(); ++r) {
    const RoundPeers round = schedule.round(peer, r);
    for (PeerId j : receive ? round.receive_from : round.send_to) peers.insert(j);
  }
  return {peers.begin(), peers.end()};
}

StaticSchedule::StaticSchedule(Graph graph, MixingMatrix weights)
    : graph_(std::move(graph)), weights_(std::move(weights)), tree_(spanning_tree(graph_)) {
  if (weights_.rows() != graph_.size() || weights_.cols() != graph_.size()) {
    throw std::invalid_argument("StaticSchedule: weight matrix size does not match the graph");
  }
}

RoundPeers StaticSchedule::round(PeerId peer, std::int64_t /*k*/) const {
  RoundPeers r;
  auto neighbors = graph_.neighbors(peer);
  r.receive_from.assign(neighbors.begin(), neighbors.end());
  r.send_to = r.receive_from;
  r.receive_weights.reserve(neighbors.size());
  for (PeerId j : neighbors) r.receive_weights.push_back(weights_.coeff(peer, j));
  r.self_weight = weights_.coeff(peer, peer);
  return r;
}

std::optional<std::vector<PeerId>> StaticSchedule::spanning_tree_neighbours(PeerId peer) const {
  return tree_.at(static_cast<std::size_t>(peer));
}

OnePeerExponentialSchedule::OnePeerExponentialSchedule(int peers) : peers_(peers), period_(1) {
  if (peers < 1) throw std::invalid_argument("one_peer_exponential needs at least 1 peer");
  int t = 0;
  while ((1 << t) < peers) ++t;
  period_ = std::max(t, 1);
}

RoundPeers OnePeerExponentialSchedule::round(PeerId peer, std::int64_t k) const {
  RoundPeers r;
  if (peers_ == 1) return r;  // alone: keep the own model
  const int hop = 1 << static_cast<int>(k % period_);
  r.receive_from = {(peer - hop % peers_ + peers_) % peers_};
  r.send_to = {(peer + hop) % peers_};
  r.receive_weights = {0.5};
  r.self_weight = 0.5;
  return r;
}

}  // namespace fastk::topology
