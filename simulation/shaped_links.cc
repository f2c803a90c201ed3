#include "simulation/shaped_links.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fastk::simulation {

ShapedLinks::ShapedLinks(int peers, double bytes_per_s)
    : bytes_per_s_(bytes_per_s),
      uplink_free_s_(static_cast<std::size_t>(peers), 0.0),
      downlink_busy_(static_cast<std::size_t>(peers)) {
  if (!(bytes_per_s >= 0) || !std::isfinite(bytes_per_s)) {
    throw std::invalid_argument("link rate must be finite and >= 0 (0: unlimited)");
  }
}

double ShapedLinks::first_gap(const std::map<double, double>& busy, double earliest,
                              double length) {
  double start = earliest;
  // The stretch that may still be running at `earliest`, then every later one in order.
  auto it = busy.upper_bound(earliest);
  if (it != busy.begin()) --it;
  for (; it != busy.end(); ++it) {
    if (it->second <= start) continue;       // over before the candidate starts
    if (it->first >= start + length) break;  // the candidate fits before it
    start = it->second;                      // overlaps: try after it
  }
  return start;
}

double ShapedLinks::arrival_s(int from, int to, double send_s, std::int64_t bytes, double delay_s) {
  if (!limited()) return send_s + delay_s;
  const double transmit_s = static_cast<double>(bytes) / bytes_per_s_;
  if (transmit_s <= 0)
    return std::max(send_s, uplink_free_s_[static_cast<std::size_t>(from)]) + delay_s;
  double& up = uplink_free_s_[static_cast<std::size_t>(from)];
  const double up_start = std::max(send_s, up);
  up = up_start + transmit_s;
  // The downlink cannot take bytes before the uplink sends them: it starts no earlier than the
  // uplink did, so it ends no earlier than the uplink.
  auto& busy = downlink_busy_[static_cast<std::size_t>(to)];
  const double start = first_gap(busy, up_start, transmit_s);
  busy.emplace(start, start + transmit_s);
  // No later message can start before send_s: stretches over by then are forgotten.
  while (!busy.empty() && busy.begin()->second <= send_s) busy.erase(busy.begin());
  return start + transmit_s + delay_s;
}

}  // namespace fastk::simulation
