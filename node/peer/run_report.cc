#include "node/peer/run_report.h"

#include "node/os/fatal_signals.h"

namespace fastk::node::peer {

RunReport::RunReport(int self, std::int64_t iterations,
                     std::chrono::steady_clock::time_point origin)
    : planned_(iterations), origin_(origin) {
  report_.peer = self;
}

IterationStart RunReport::began(double now_s, double unix_s,
                                const std::optional<IterationStart>& earlier) {
  const double origin_s = std::chrono::duration<double>(origin_.time_since_epoch()).count();
  // An earlier start after this instant is of another boot of the machine (the monotonic
  // clock restarts): times then count from this process's start.
  if (earlier && earlier->monotonic_s > origin_s + now_s) return began(now_s, unix_s);
  began_s_ = earlier ? earlier->monotonic_s - origin_s : now_s;
  last_update_s_ = now_s;
  report_.startup_s = now_s;
  report_.first_iteration_unix_s = earlier ? earlier->unix_s : unix_s;
  return {report_.first_iteration_unix_s, origin_s + began_s_};
}

void RunReport::starts_at(std::int64_t iteration) { report_.iterations = iteration; }

void RunReport::validation_done(double compute_s) { report_.compute_s += compute_s; }

void RunReport::gradient_done(double compute_s, double injected_s, double loss) {
  report_.compute_s += compute_s;
  report_.injected_s += injected_s;
  last_loss_ = loss;
}

consensus::IterationRecord RunReport::iteration_done(const consensus::IterationRecord& r) {
  ++report_.iterations;
  // A crash from here on comes "after N iterations", not "at start-up".
  os::set_iteration_for_fatal_signals(report_.iterations);
  last_update_s_ = r.update_s;
  report_.waiting_s += r.wait_s();
  totals_.add(r);
  consensus::IterationRecord shifted = r;
  shifted.start_s -= began_s_;
  shifted.gradient_done_s -= began_s_;
  shifted.update_s -= began_s_;
  return shifted;
}

void RunReport::departed(int peer, std::int64_t iteration, const std::string& how) {
  last_departure_[peer] = how;
  report_.departures.push_back({peer, iteration, how});
}

void RunReport::shared_model_sent(std::size_t neighbours, std::size_t bytes) {
  report_.shared_models_sent += neighbours;
  report_.shared_bytes += neighbours * bytes;
}

void RunReport::ended(bool finished, std::string end) {
  report_.finished = finished;
  report_.stopped = !finished;
  report_.end = std::move(end);
  report_.elapsed_s = report_.iterations ? last_update_s_ - began_s_ : 0;
  const double origin_s = std::chrono::duration<double>(origin_.time_since_epoch()).count();
  report_.first_iteration_monotonic_s = origin_s + began_s_;
  report_.last_update_monotonic_s = origin_s + last_update_s_;
  report_.last_update_unix_s = report_.first_iteration_unix_s + report_.elapsed_s;
  report_.gossips = totals_.gossips;
  report_.mean_awaited = totals_.mean_awaited();
  report_.mean_used = totals_.mean_used();
  report_.mean_backups = totals_.mean_backups();
  report_.rejected_models = totals_.rejected;
}

void RunReport::count_link(const transport::Link& link, const OutboundQueue& outbound,
                           const SharedModelReader& shared) {
  const auto totals = link.send_totals();
  report_.messages_sent = totals.queued;
  report_.sends_refused = totals.dropped;
  report_.bytes_sent = totals.bytes_queued;
  report_.models_superseded = outbound.superseded();
  report_.differences_dropped = outbound.dropped_differences();
  for (std::size_t c = 0; c < wire::kWireErrorCount; ++c) {
    const auto cause = static_cast<wire::WireError>(c);
    if (auto count = link.rejections().count(cause)) {
      report_.rejected[std::string(wire::to_string(cause))] = count;
    }
  }
  report_.refused_connections = link.refused_connections();
  report_.shared_models_lapped = shared.lapped();
  if (auto bad = shared.bad()) report_.rejected["bad shared model"] += bad;
}

PeerProgress RunReport::progress() const {
  PeerProgress p;
  p.iteration = report_.iterations;
  p.iterations = planned_;
  p.loss = last_loss_;
  p.accuracy = NAN;  // the launcher shows the mean model's
  p.elapsed_s = report_.iterations ? last_update_s_ - began_s_ : 0;
  p.waiting_s = report_.waiting_s;
  p.mean_backup = report_.iterations ? totals_.mean_backups() : NAN;
  return p;
}

}  // namespace fastk::node::peer
