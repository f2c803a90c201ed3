#include "node/sim/trace_delays.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace fastk::node::sim {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// When `peer`'s model of tag k left in the record: when it began iteration k (combine then
// adapt: x(k) goes out first), or when it took its gradient of k (adapt then combine, and
// compressed gossip: the step comes before the send; consensus/variants/).
double sent_s(const RecordedRun& run, int peer, std::int64_t k) {
  const auto& its = run.peers.at(static_cast<std::size_t>(peer)).iterations;
  if (k >= static_cast<std::int64_t>(its.size())) return its.back().update_s;
  const RecordedIteration& it = its[static_cast<std::size_t>(k)];
  return run.config.consensus.protocol.order == consensus::UpdateOrder::kAdaptThenCombine
             ? it.gradient_done_s
             : it.start_s;
}

}  // namespace

TraceDelays::TraceDelays(const RecordedRun& run, bool as_recorded)
    : run_(run), as_recorded_(as_recorded) {
  std::vector<double> all;
  for (const auto& [link, by_tag] : run.arrivals) {
    std::vector<double> delays;
    for (const auto& [k, at_s] : by_tag) {
      delays.push_back(std::max(0.0, at_s - sent_s(run, link.second, k)));
    }
    link_median_s_[link] = median(delays);
    all.insert(all.end(), delays.begin(), delays.end());
  }
  median_s_ = median(std::move(all));
}

double TraceDelays::compute_time_s(consensus::PeerId peer, std::int64_t k) {
  const auto& its = run_.peers.at(static_cast<std::size_t>(peer)).iterations;
  if (k < 0 || k >= static_cast<std::int64_t>(its.size())) {
    throw std::out_of_range("the replay asked for peer " + std::to_string(peer) +
                            "'s gradient of iteration " + std::to_string(k) +
                            ", beyond the record's " + std::to_string(its.size()));
  }
  const RecordedIteration& it = its[static_cast<std::size_t>(k)];
  return std::max(0.0, it.gradient_done_s - it.start_s);
}

double TraceDelays::link_delay_s(consensus::PeerId from, consensus::PeerId to, std::int64_t k) {
  const auto link = run_.arrivals.find({to, from});
  if (link != run_.arrivals.end()) {
    // Taken; or (another policy) superseded: it comes with the newer one that was taken.
    const auto at = as_recorded_ ? link->second.find(k) : link->second.lower_bound(k);
    if (at != link->second.end()) return std::max(0.0, at->second - sent_s(run_, from, k));
  }
  // The record's receiver never took it, nor anything newer on the link (superseded ones
  // are not delivered at all): it came after the receiver's last update, if at all.
  ++without_arrival_;
  const auto m = link_median_s_.find({to, from});
  const double median_s = m != link_median_s_.end() ? m->second : median_s_;
  const auto& receiver = run_.peers.at(static_cast<std::size_t>(to)).iterations;
  constexpr double kAfter_s = 1e-6;
  const double after_end_s =
      (receiver.empty() ? 0.0 : receiver.back().update_s) + kAfter_s - sent_s(run_, from, k);
  return std::max(median_s, after_end_s);
}

bool TraceDelays::delivered(consensus::PeerId from, consensus::PeerId to, std::int64_t k) {
  const auto link = run_.arrivals.find({to, from});
  if (!as_recorded_ || link == run_.arrivals.end() || link->second.count(k)) return true;
  // Never taken, while a newer one was: a real sender sends only the newest model waiting in
  // its queue (docs/design.md, the outbound queue).
  const bool superseded = link->second.upper_bound(k) != link->second.end();
  superseded_ += superseded ? 1 : 0;
  return !superseded;
}

double TraceDelays::timer_latency_s(consensus::PeerId peer, double at_s) {
  const auto& fired = run_.timers_fired_s.at(static_cast<std::size_t>(peer));
  const auto next = std::lower_bound(fired.begin(), fired.end(), at_s);
  // The loop wakes up within a millisecond of a due timer, later on a loaded machine: a
  // firing further off was another timer's.
  constexpr double kLongestLatency_s = 0.02;
  return next != fired.end() && *next - at_s < kLongestLatency_s ? *next - at_s : 0.0;
}

double TraceDelays::goodbye_delay_s(consensus::PeerId from, consensus::PeerId to) {
  const auto bye = run_.goodbyes.find({to, from});
  if (bye == run_.goodbyes.end()) return 0;
  const auto& its = run_.peers.at(static_cast<std::size_t>(from)).iterations;
  return std::max(0.0, bye->second - (its.empty() ? 0.0 : its.back().update_s));
}

}  // namespace fastk::node::sim
