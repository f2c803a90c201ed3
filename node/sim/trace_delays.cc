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

// When `peer` began iteration k in the record (its model of tag k went out then).
double began_s(const RecordedRun& run, int peer, std::int64_t k) {
  const auto& its = run.peers.at(static_cast<std::size_t>(peer)).iterations;
  return k < static_cast<std::int64_t>(its.size()) ? its[static_cast<std::size_t>(k)].start_s
                                                   : its.back().update_s;
}

}  // namespace

TraceDelays::TraceDelays(const RecordedRun& run) : run_(run) {
  std::vector<double> all;
  for (const auto& [link, by_tag] : run.arrivals) {
    std::vector<double> delays;
    for (const auto& [k, at_s] : by_tag) {
      delays.push_back(std::max(0.0, at_s - began_s(run, link.second, k)));
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
    // Taken; or never sent, a newer model having taken its place in the sender's queue
    // (docs/transport.md): it arrives with the newer one, which supersedes it.
    if (const auto at = link->second.lower_bound(k); at != link->second.end()) {
      substituted_ += at->first != k ? 1 : 0;
      return std::max(0.0, at->second - began_s(run_, from, k));
    }
  }
  // The record's receiver took nothing of this tag or newer: it came after the receiver's last
  // update, if at all.
  ++substituted_;
  const auto m = link_median_s_.find({to, from});
  const double median_s = m != link_median_s_.end() ? m->second : median_s_;
  const auto& receiver = run_.peers.at(static_cast<std::size_t>(to)).iterations;
  constexpr double kAfter_s = 1e-6;
  const double after_end_s =
      (receiver.empty() ? 0.0 : receiver.back().update_s) + kAfter_s - began_s(run_, from, k);
  return std::max(median_s, after_end_s);
}

double TraceDelays::timer_latency_s(consensus::PeerId peer, double at_s) {
  const auto& fired = run_.timers_fired_s.at(static_cast<std::size_t>(peer));
  const auto next = std::lower_bound(fired.begin(), fired.end(), at_s);
  constexpr double kLongestLatency_s = 1.0;
  return next != fired.end() && *next - at_s < kLongestLatency_s ? *next - at_s : 0.0;
}

double TraceDelays::goodbye_delay_s(consensus::PeerId from, consensus::PeerId to) {
  const auto bye = run_.goodbyes.find({to, from});
  if (bye == run_.goodbyes.end()) return 0;
  const auto& its = run_.peers.at(static_cast<std::size_t>(from)).iterations;
  return std::max(0.0, bye->second - (its.empty() ? 0.0 : its.back().update_s));
}

}  // namespace fastk::node::sim
