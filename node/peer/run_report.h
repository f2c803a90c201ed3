// What a peer driver tells at the end (PeerReport), kept as the run goes: the iterations and
// their times, compute and waiting, departures, the link's counters, and the @progress line
// for the launcher. The driver (peer_driver.h) reports events here; nothing here does I/O.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "consensus/actions.h"
#include "node/launch/progress.h"
#include "node/metrics/run_metrics.h"
#include "node/peer/outbound_queue.h"
#include "node/peer/peer_report.h"
#include "node/peer/shared_model_reader.h"
#include "node/transport/link.h"

namespace fastk::node::peer {

class RunReport {
 public:
  // `origin`: the clock the protocol's times count from.
  RunReport(int self, std::int64_t iterations, std::chrono::steady_clock::time_point origin);

  // The first iteration begins at `now_s` (protocol clock), at Unix time `unix_s`; or, for a
  // peer that comes back, `earlier` says when its first process began, and times count from
  // then. Returns the start the times count from.
  IterationStart began(double now_s, double unix_s,
                       const std::optional<IterationStart>& earlier = std::nullopt);
  // A peer that comes back counts on from the iteration it goes on at (its checkpoint's, or
  // the one it joined at), so its summary ends at the run's last iteration.
  void starts_at(std::int64_t iteration);
  void gradient_done(double compute_s, double injected_s, double loss);
  // A validation's forward passes ([consensus] validate): compute time too.
  void validation_done(double compute_s);
  // Counts `r`; returns it with times counted from the first iteration, as the files have
  // them (the protocol's clock began with the process, before the data load and handshake).
  consensus::IterationRecord iteration_done(const consensus::IterationRecord& r);
  void departed(int peer, std::int64_t iteration, const std::string& how);
  // Per neighbour, its last recorded departure ("bye", "silent" or "lost a difference").
  const std::map<int, std::string>& last_departures() const { return last_departure_; }
  void shared_model_sent(std::size_t neighbours, std::size_t bytes);
  // How the iterating phase ended (end: iterations, duration, target or signal).
  void ended(bool finished, std::string end);
  // The link's, the outbound queue's and the shared-model reader's counters.
  void count_link(const transport::Link& link, const OutboundQueue& outbound,
                  const SharedModelReader& shared);
  PeerProgress progress() const;
  std::int64_t iterations() const { return report_.iterations; }
  // The protocol-clock time the files' times count from (valid after began()).
  double began_s() const { return began_s_; }
  bool finished() const { return report_.finished; }
  PeerReport take() { return std::move(report_); }

 private:
  std::int64_t planned_;
  std::chrono::steady_clock::time_point origin_;
  double began_s_ = 0;
  double last_update_s_ = 0;
  double last_loss_ = NAN;
  metrics::IterationTotals totals_;
  std::map<int, std::string> last_departure_;
  PeerReport report_;
};

}  // namespace fastk::node::peer
