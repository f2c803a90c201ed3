// Seeded compute-time and link-delay draws from a DelaySpec. Every draw is a pure function
// of (seed, peer or link, iteration) through a counter-based hash, so each peer has an
// independent random stream and the result does not depend on the order in which peers or
// threads ask. The Gilbert-Elliott state of a peer is a chain over iterations; it is
// advanced lazily and cached per peer (queries for a peer must not go back in time by more
// than the cache, which they never do in a run).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "consensus/runtime_sources.h"
#include "node/stragglers/delay_spec.h"

namespace fastk::node::stragglers {

class DelayModel final : public consensus::DelaySource {
 public:
  // Throws std::invalid_argument naming the bad field (peer ids checked against `peers`).
  DelayModel(DelaySpec spec, int peers);

  // Multiplier of the base compute time of `peer` at iteration k (>= 1 for the
  // multiplicative straggler parts; the distribution part may be below 1 for shift < 1).
  double slowdown(int peer, std::int64_t k);
  double compute_time_s(int peer, std::int64_t k) override;
  double link_delay_s(int from, int to, std::int64_t k) override;
  // What a real peer sleeps after computing its gradient: the slowdown beyond 1 times the
  // base gradient time (never negative: a peer cannot be made faster than it is).
  double injected_sleep_s(int peer, std::int64_t k, double base_gradient_s);
  // Whether any link gets a delay (real peers then hold messages back that long).
  bool delays_links() const;
  // Whether the Markov chain of `peer` is in its bad state at iteration k.
  bool markov_bad(int peer, std::int64_t k);

 private:
  double uniform(std::uint64_t stream, std::uint64_t a, std::uint64_t b, std::uint64_t c) const;

  DelaySpec spec_;
  std::vector<double> persistent_factor_;
  struct Chain {
    std::int64_t k = -1;
    bool bad = false;
  };
  struct ChainParameters {  // the table's markov_* keys, or the peer's markov_classes entry
    double good_to_bad = 0;
    double bad_to_good = 0.5;
    double factor = 10;
  };
  void apply_markov_classes(int peers);

  std::vector<Chain> chains_;
  std::vector<ChainParameters> chain_parameters_;
  std::map<std::pair<int, int>, LinkOverride> links_;
};

}  // namespace fastk::node::stragglers
