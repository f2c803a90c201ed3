#include "topology/directed.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace fastk::topology {
namespace {

// Peers reachable from peer 0 along `next`.
std::vector<bool> reached_from_zero(const std::vector<std::vector<PeerId>>& next) {
  std::vector<bool> seen(next.size());
  if (next.empty()) return seen;
  std::vector<PeerId> stack = {0};
  seen[0] = true;
  while (!stack.empty()) {
    const PeerId u = stack.back();
    stack.pop_back();
    for (PeerId v : next[static_cast<std::size_t>(u)]) {
      if (!seen[static_cast<std::size_t>(v)]) {
        seen[static_cast<std::size_t>(v)] = true;
        stack.push_back(v);
      }
    }
  }
  return seen;
}

std::string ids(const std::vector<PeerId>& peers) {
  std::string text;
  for (std::size_t i = 0; i < peers.size() && i < 10; ++i) {
    text += (i ? ", " : "") + std::to_string(peers[i]);
  }
  return text + (peers.size() > 10 ? ", ..." : "");
}

}  // namespace

bool strongly_connected(int peers, const std::vector<Edge>& arcs,
                        std::vector<PeerId>* unreachable) {
  std::vector<std::vector<PeerId>> forward(static_cast<std::size_t>(peers)), backward = forward;
  for (const Edge& arc : arcs) {
    forward[static_cast<std::size_t>(arc.a)].push_back(arc.b);
    backward[static_cast<std::size_t>(arc.b)].push_back(arc.a);
  }
  const auto there = reached_from_zero(forward), back = reached_from_zero(backward);
  std::vector<PeerId> cut;
  for (PeerId i = 0; i < peers; ++i) {
    if (!there[static_cast<std::size_t>(i)] || !back[static_cast<std::size_t>(i)]) cut.push_back(i);
  }
  if (unreachable) *unreachable = cut;
  return cut.empty();
}

Graph underlying_graph(int peers, const std::vector<Edge>& arcs) {
  std::set<std::pair<PeerId, PeerId>> pairs;
  for (const Edge& arc : arcs) pairs.insert(std::minmax(arc.a, arc.b));
  std::vector<Edge> edges;
  for (const auto& [a, b] : pairs) edges.push_back({a, b});
  return Graph(peers, std::move(edges));
}

DirectedSchedule::DirectedSchedule(int peers, std::vector<Edge> arcs)
    : arcs_(std::move(arcs)), in_(static_cast<std::size_t>(std::max(peers, 0))), out_(in_.size()) {
  if (peers < 1) throw std::invalid_argument("a directed graph needs at least 1 peer");
  std::set<std::pair<PeerId, PeerId>> seen;
  for (const Edge& arc : arcs_) {
    const std::string name = std::to_string(arc.a) + " -> " + std::to_string(arc.b);
    if (arc.a < 0 || arc.b < 0 || arc.a >= peers || arc.b >= peers) {
      throw std::invalid_argument("arc " + name + ": peer id outside 0.." +
                                  std::to_string(peers - 1));
    }
    if (arc.a == arc.b) throw std::invalid_argument("arc " + name + " is a self loop");
    if (!seen.insert({arc.a, arc.b}).second) {
      throw std::invalid_argument("arc " + name + " is listed twice");
    }
    out_[static_cast<std::size_t>(arc.a)].push_back(arc.b);
    in_[static_cast<std::size_t>(arc.b)].push_back(arc.a);
  }
  std::vector<PeerId> cut;
  if (!strongly_connected(peers, arcs_, &cut)) {
    throw std::invalid_argument(
        "the directed graph is not strongly connected: peer(s) " + ids(cut) +
        " cannot reach peer 0 or be reached from it, so their models would never mix with "
        "everyone's");
  }
  for (auto& list : in_) std::sort(list.begin(), list.end());
  for (auto& list : out_) std::sort(list.begin(), list.end());
}

RoundPeers DirectedSchedule::round(PeerId peer, std::int64_t /*k*/) const {
  RoundPeers r;
  r.receive_from = in_.at(static_cast<std::size_t>(peer));
  r.send_to = out_.at(static_cast<std::size_t>(peer));
  for (PeerId j : r.receive_from) {
    r.receive_weights.push_back(
        1.0 / (1.0 + static_cast<double>(out_[static_cast<std::size_t>(j)].size())));
  }
  r.self_weight = 1.0 / (1.0 + static_cast<double>(r.send_to.size()));
  return r;
}

}  // namespace fastk::topology
