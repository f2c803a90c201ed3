#include "node/stragglers/delay_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "learning/random.h"

namespace fastk::node::stragglers {
namespace {

// Streams keep the draws of different straggler parts independent.
enum Stream : std::uint64_t { kDistribution = 1, kTransient, kMarkov, kWindow, kLink };

void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("stragglers: " + what);
}

void check_probability(double p, const std::string& name) {
  check(p >= 0 && p <= 1, name + " must be in [0, 1]");
}

}  // namespace

ComputeDistribution parse_compute_distribution(const std::string& name) {
  if (name == "none") return ComputeDistribution::kNone;
  if (name == "shifted_exponential") return ComputeDistribution::kShiftedExponential;
  if (name == "pareto") return ComputeDistribution::kPareto;
  throw std::invalid_argument("unknown compute-time distribution \"" + name +
                              "\"; expected none, shifted_exponential or pareto");
}

std::string to_string(ComputeDistribution d) {
  switch (d) {
    case ComputeDistribution::kNone:
      return "none";
    case ComputeDistribution::kShiftedExponential:
      return "shifted_exponential";
    case ComputeDistribution::kPareto:
      return "pareto";
  }
  return "?";
}

DelayModel::DelayModel(DelaySpec spec, int peers)
    : spec_(std::move(spec)),
      persistent_factor_(static_cast<std::size_t>(peers), 1.0),
      chains_(static_cast<std::size_t>(peers)) {
  check(peers >= 1, "needs at least one peer");
  check(spec_.compute_s >= 0, "compute_s must be >= 0");
  check(spec_.shift >= 0, "shift must be >= 0");
  check(spec_.exp_mean >= 0, "exp_mean must be >= 0");
  check(spec_.pareto_alpha > 0, "pareto_alpha must be > 0");
  check_probability(spec_.transient_probability, "transient_probability");
  check(spec_.transient_factor > 0, "transient_factor must be > 0");
  check_probability(spec_.markov_good_to_bad, "markov_good_to_bad");
  check_probability(spec_.markov_bad_to_good, "markov_bad_to_good");
  check(spec_.markov_factor > 0, "markov_factor must be > 0");
  check(spec_.link_s >= 0, "link_s must be >= 0");
  check(spec_.link_jitter_s >= 0, "link_jitter_s must be >= 0");
  auto check_peer = [&](int p, const std::string& where) {
    check(p >= 0 && p < peers,
          where + ": peer " + std::to_string(p) + " is not in [0, " + std::to_string(peers) + ")");
  };
  for (const auto& s : spec_.slow_peers) {
    check_peer(s.peer, "slow_peers");
    check(s.factor > 0, "slow_factors must be > 0");
    persistent_factor_[static_cast<std::size_t>(s.peer)] *= s.factor;
  }
  apply_markov_classes(peers);
  for (const auto& w : spec_.windows) {
    for (int p : w.peers) check_peer(p, "windows.peers");
    check(w.from_iteration <= w.to_iteration, "windows: from_iteration > to_iteration");
    check_probability(w.probability, "windows.probability");
    check(w.factor > 0, "windows.factor must be > 0");
  }
  for (const auto& l : spec_.links) {
    check_peer(l.from, "links.from");
    check_peer(l.to, "links.to");
    check(l.factor > 0, "links.factor must be > 0");
    links_[{l.from, l.to}] = l;
  }
}

void DelayModel::apply_markov_classes(int peers) {
  chain_parameters_.assign(
      static_cast<std::size_t>(peers),
      {spec_.markov_good_to_bad, spec_.markov_bad_to_good, spec_.markov_factor});
  std::vector<bool> listed(static_cast<std::size_t>(peers), false);
  for (const auto& c : spec_.markov_classes) {
    check(!c.peers.empty(), "markov_classes: a class needs peers");
    check_probability(c.good_to_bad, "markov_classes.good_to_bad");
    check_probability(c.bad_to_good, "markov_classes.bad_to_good");
    check(c.factor > 0, "markov_classes.factor must be > 0");
    for (int p : c.peers) {
      check(p >= 0 && p < peers, "markov_classes.peers: peer " + std::to_string(p) +
                                     " is not in [0, " + std::to_string(peers) + ")");
      const auto i = static_cast<std::size_t>(p);
      check(!listed[i], "markov_classes.peers: peer " + std::to_string(p) +
                            " is in more than one class (or twice in one)");
      listed[i] = true;
      chain_parameters_[i] = {c.good_to_bad, c.bad_to_good, c.factor};
    }
  }
}

double DelayModel::uniform(std::uint64_t stream, std::uint64_t a, std::uint64_t b,
                           std::uint64_t c) const {
  std::uint64_t h = learning::mix64(spec_.seed ^ learning::mix64(stream));
  h = learning::mix64(h ^ a);
  h = learning::mix64(h ^ b);
  h = learning::mix64(h ^ c);
  return static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
}

bool DelayModel::markov_bad(int peer, std::int64_t k) {
  Chain& chain = chains_[static_cast<std::size_t>(peer)];
  if (k < chain.k) chain = Chain{};  // replay from the start (never happens in a run)
  while (chain.k < k) {
    ++chain.k;
    if (chain.k == 0) continue;  // starts in the good state
    const double u =
        uniform(kMarkov, static_cast<std::uint64_t>(peer), static_cast<std::uint64_t>(chain.k), 0);
    const ChainParameters& c = chain_parameters_[static_cast<std::size_t>(peer)];
    chain.bad = chain.bad ? !(u < c.bad_to_good) : u < c.good_to_bad;
  }
  return chain.bad;
}

double DelayModel::slowdown(int peer, std::int64_t k) {
  const auto p = static_cast<std::uint64_t>(peer);
  const auto it = static_cast<std::uint64_t>(k);
  double x = 1.0;
  const double u = uniform(kDistribution, p, it, 0);
  switch (spec_.distribution) {
    case ComputeDistribution::kNone:
      break;
    case ComputeDistribution::kShiftedExponential:
      x = spec_.shift - spec_.exp_mean * std::log1p(-u);
      break;
    case ComputeDistribution::kPareto:
      x = std::pow(1.0 - u, -1.0 / spec_.pareto_alpha);
      break;
  }
  if (spec_.transient_probability > 0 &&
      uniform(kTransient, p, it, 0) < spec_.transient_probability) {
    x *= spec_.transient_factor;
  }
  x *= persistent_factor_[static_cast<std::size_t>(peer)];
  const ChainParameters& chain = chain_parameters_[static_cast<std::size_t>(peer)];
  if (chain.good_to_bad > 0 && markov_bad(peer, k)) x *= chain.factor;
  for (std::size_t w = 0; w < spec_.windows.size(); ++w) {
    const SlowWindow& window = spec_.windows[w];
    if (k < window.from_iteration || k >= window.to_iteration) continue;
    const bool listed = window.peers.empty() || std::find(window.peers.begin(), window.peers.end(),
                                                          peer) != window.peers.end();
    if (listed && uniform(kWindow, p, it, w) < window.probability) x *= window.factor;
  }
  return x;
}

double DelayModel::compute_time_s(int peer, std::int64_t k) {
  return spec_.compute_s * slowdown(peer, k);
}

double DelayModel::injected_sleep_s(int peer, std::int64_t k, double base_gradient_s) {
  return std::max(0.0, (slowdown(peer, k) - 1.0) * base_gradient_s);
}

bool DelayModel::delays_links() const {
  if (spec_.link_s > 0 || spec_.link_jitter_s > 0) return true;
  for (const auto& l : spec_.links) {
    if (l.delay_s > 0) return true;
  }
  return false;
}

double DelayModel::link_delay_s(int from, int to, std::int64_t k) {
  double delay = spec_.link_s;
  if (spec_.link_jitter_s > 0) {
    const double u = uniform(kLink, static_cast<std::uint64_t>(from),
                             static_cast<std::uint64_t>(to), static_cast<std::uint64_t>(k));
    delay -= spec_.link_jitter_s * std::log1p(-u);
  }
  if (!links_.empty()) {
    const auto it = links_.find({from, to});
    if (it != links_.end()) {
      if (it->second.delay_s >= 0) delay = it->second.delay_s;
      delay *= it->second.factor;
    }
  }
  return delay;
}

}  // namespace fastk::node::stragglers
