// Plain description of compute times and link delays: the [stragglers] table of an
// experiment config (keys and defaults in experiments/configs/README.md). Shared by the
// simulator (virtual durations) and real peers (injected sleeps), with one meaning in both:
// a slowdown factor multiplies the base gradient time, and link delays are added to what
// the link itself takes. The base is `compute_s` in an abstract simulation; on a machine
// (real peers, a calibrated simulation) it is the measured time of one plain gradient.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastk::node::stragglers {

enum class ComputeDistribution {
  kNone,                // X = 1
  kShiftedExponential,  // X = shift + Exp(mean = exp_mean)
  kPareto,              // X = Pareto(alpha, x_min = 1), mean alpha / (alpha - 1)
};
// "none", "shifted_exponential", "pareto"; throws std::invalid_argument otherwise.
ComputeDistribution parse_compute_distribution(const std::string& name);
std::string to_string(ComputeDistribution d);

struct SlowPeer {  // persistent straggler
  int peer = 0;
  double factor = 1;
};

// Peers slowed between iterations [from_iteration, to_iteration), each iteration with
// `probability` (1 = always), by `factor`. Empty `peers` = every peer.
struct SlowWindow {
  std::vector<int> peers = {};
  std::int64_t from_iteration = 0;
  std::int64_t to_iteration = 0;
  double probability = 1.0;
  double factor = 1.0;
};

// GC-DC's heterogeneous worker model: the listed peers' Gilbert-Elliott chain has these
// parameters instead of the table's markov_* keys (which every other peer keeps).
struct MarkovClass {
  std::vector<int> peers = {};
  double good_to_bad = 0;
  double bad_to_good = 0.5;
  double factor = 10;
};

struct LinkOverride {  // a specific directed link: delay replaced and/or scaled
  int from = 0;
  int to = 0;
  double delay_s = -1;  // < 0: keep the default link delay
  double factor = 1;
};

struct DelaySpec {
  double compute_s = 1.0;  // base compute time of one gradient (abstract simulation only)
  ComputeDistribution distribution = ComputeDistribution::kNone;
  double shift = 1.0;
  double exp_mean = 1.0;
  double pareto_alpha = 1.5;
  // Bimodal transient stragglers: each iteration each peer is slow with this probability.
  double transient_probability = 0;
  double transient_factor = 10;
  std::vector<SlowPeer> slow_peers = {};
  // Gilbert-Elliott: per-iteration transition probabilities of a two-state Markov chain
  // starting in the good state; in the bad state compute takes markov_factor times longer.
  double markov_good_to_bad = 0;
  double markov_bad_to_good = 0.5;
  double markov_factor = 10;
  std::vector<MarkovClass> markov_classes = {};
  std::vector<SlowWindow> windows = {};
  // Links: added delay = link_s + Exp(mean = link_jitter_s), overrides applied.
  double link_s = 0;
  double link_jitter_s = 0;
  std::vector<LinkOverride> links = {};
  std::uint64_t seed = 1;
};

}  // namespace fastk::node::stragglers
