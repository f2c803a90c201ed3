#include "node/metrics/peer_summary.h"

namespace fastk::node::metrics {
namespace {

// What only a real peer measures: null for a simulated one.
template <typename T>
nlohmann::ordered_json real(const PeerReport& r, const T& value) {
  return r.simulated ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(value);
}

void add_real_counters(const PeerReport& r, nlohmann::ordered_json& s) {
  s["messages_sent"] = real(r, r.messages_sent);
  s["sends_refused"] = real(r, r.sends_refused);
  s["models_superseded"] = real(r, r.models_superseded);
  s["differences_dropped"] = real(r, r.differences_dropped);
  s["bytes_sent"] = real(r, r.bytes_sent);
  s["shared_models_sent"] = real(r, r.shared_models_sent);
  s["shared_bytes"] = real(r, r.shared_bytes);
  s["shared_models_lapped"] = real(r, r.shared_models_lapped);
  s["rejected_frames"] = real(r, r.rejected);
  s["refused_connections"] = real(r, r.refused_connections);
  s["links"] = real(r, r.links);
}

}  // namespace

std::map<std::string, std::int64_t> by_cause(const consensus::DropCounts& drops) {
  std::map<std::string, std::int64_t> counts;
  for (std::size_t c = 0; c < consensus::kDropCauseCount; ++c) {
    const auto cause = static_cast<consensus::DropCause>(c);
    if (auto count = drops.count(cause)) counts[std::string(consensus::to_string(cause))] = count;
  }
  return counts;
}

nlohmann::ordered_json to_json(const PeerReport& r) {
  nlohmann::ordered_json s;
  s["peer"] = r.peer;
  s["runtime"] = r.simulated ? "sim" : "real";
  s["iterations"] = r.iterations;
  s["finished"] = r.finished;
  s["stopped"] = r.stopped;
  s["end"] = r.end;
  s["resumed"] = real(r, r.resumed);
  s["startup_s"] = real(r, r.startup_s);
  s["elapsed_s"] = r.elapsed_s;
  s["first_iteration_unix_s"] = real(r, r.first_iteration_unix_s);
  s["last_update_unix_s"] = real(r, r.last_update_unix_s);
  s["first_iteration_monotonic_s"] = real(r, r.first_iteration_monotonic_s);
  s["last_update_monotonic_s"] = real(r, r.last_update_monotonic_s);
  s["waiting_s"] = r.waiting_s;
  s["compute_s"] = r.compute_s;
  s["injected_s"] = real(r, r.injected_s);
  s["base_gradient_s"] = r.base_gradient_s;  // NaN (null) when none was known
  s["gossips"] = r.gossips;
  s["mean_awaited"] = r.mean_awaited;
  s["mean_used"] = r.mean_used;
  s["mean_backups"] = r.mean_backups;
  s["rejected_models"] = r.rejected_models;
  std::int64_t dropped = 0;
  for (const auto& [cause, count] : r.dropped) dropped += count;
  s["dropped_messages"] = dropped;
  s["dropped_by_cause"] = r.dropped;
  add_real_counters(r, s);
  auto& departures = s["departures"] = nlohmann::ordered_json::array();
  for (const auto& d : r.departures) {
    departures.push_back({{"peer", d.peer}, {"at_iteration", d.at_iteration}, {"how", d.how}});
  }
  s["test_loss"] = r.final_eval ? nlohmann::ordered_json(r.final_eval->loss) : nullptr;
  s["test_accuracy"] = r.final_eval ? nlohmann::ordered_json(r.final_eval->accuracy) : nullptr;
  s["peak_rss_mib"] = real(r, r.peak_rss_mib);
  return s;
}

}  // namespace fastk::node::metrics
