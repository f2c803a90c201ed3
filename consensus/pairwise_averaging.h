// AD-PSGD's pairwise averaging (Lian et al. 2018; docs/protocol.md §4.5) for one peer: its
// side of the bipartite graph, whom an active peer asks at each iteration, the averaging
// arithmetic, and the requests still open. PeerProtocol drives it under policy ad_psgd.
//
// The average is atomic in effect without locks: the passive peer applies its half and
// replies with the other half as a difference, which the active peer adds to whatever its
// model is then. The sum of all models changes only by the gradient steps, however the
// messages and the gradients interleave.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "consensus/params.h"
#include "topology/schedule.h"

namespace fastk::consensus {

using topology::PeerId;

class PairwiseAveraging {
 public:
  // Throws std::invalid_argument when the schedule has no fixed undirected graph or the graph
  // is not bipartite (naming two neighbours on the same side).
  PairwiseAveraging(PeerId self, const topology::TopologySchedule& schedule, std::uint64_t seed,
                    std::size_t parameters);

  // The sides of `schedule`'s graph (active[i]: peer i starts averages); throws as the
  // constructor does. `fastk run` asks before it starts any peer.
  static std::vector<bool> sides_of(const topology::TopologySchedule& schedule);

  bool active() const { return active_; }
  bool is_active(PeerId peer) const { return sides_[static_cast<std::size_t>(peer)]; }

  // Active: the partner of iteration k, drawn uniformly from `available` by a hash of
  // (seed, peer, k), so a resumed peer and both runtimes draw alike; nullopt when empty.
  std::optional<PeerId> choose(std::int64_t k, const std::vector<PeerId>& available) const;
  // Active: the request of iteration `tag` with `model` went to `partner`; its reply is
  // awaited. The model is held until the reply comes, so a runtime that shares the buffer
  // (shared memory) cannot rewrite it before the partner has read it.
  void requested(PeerId partner, std::int64_t tag, Params model);
  // Active: a request to `partner` is open (the partner is not asked again until it answers,
  // so at most one per neighbour is open).
  bool open_with(PeerId partner) const;
  // Active: `partner` came back (restarted): its open request will never be answered.
  void forget(PeerId partner);
  // Active: the partner whose reply the current iteration waits for.
  std::optional<PeerId> awaited() const { return awaited_; }
  // Active: stop waiting (the partner is gone). Its reply, should it still come, is added
  // then: the partner has applied its half.
  void give_up() { awaited_.reset(); }
  // Active: a reply to the request `tag` sent to `from`; `reply` empty: declined. False when
  // no such request is open (the message is dropped).
  bool take_reply(PeerId from, std::int64_t tag, std::span<const float> reply);
  // Active: the replies taken since the last update, summed (empty when none), and the
  // requests they answered; handed over once.
  std::vector<float> take_difference();
  std::vector<std::pair<PeerId, std::int64_t>> take_answered();

  // Passive: answers a request with model `theirs`: reply = (mine - theirs) / 2 and
  // next = mine - reply, element by element.
  static void answer(std::span<const float> mine, std::span<const float> theirs,
                     std::span<float> next, std::span<float> reply);

 private:
  PeerId self_;
  std::vector<bool> sides_;
  bool active_ = false;
  std::uint64_t seed_;
  std::size_t parameters_;
  std::optional<PeerId> awaited_;
  std::int64_t awaited_tag_ = -1;
  // Requests sent and not answered (kept past give_up until the reply comes), at most one
  // per neighbour.
  struct Open {
    PeerId partner = 0;
    std::int64_t tag = 0;
    Params model;
  };
  std::vector<Open> open_;
  std::vector<float> difference_;
  std::vector<std::pair<PeerId, std::int64_t>> answered_;
};

}  // namespace fastk::consensus
