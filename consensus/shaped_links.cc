#include "consensus/shaped_links.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fastk::consensus {

ShapedLinks::ShapedLinks(int peers, double bytes_per_s)
    : bytes_per_s_(bytes_per_s),
      uplink_free_s_(static_cast<std::size_t>(peers), 0.0),
      downlink_free_s_(static_cast<std::size_t>(peers), 0.0) {
  if (!(bytes_per_s >= 0) || !std::isfinite(bytes_per_s)) {
    throw std::invalid_argument("link rate must be finite and >= 0 (0: unlimited)");
  }
}

double ShapedLinks::arrival_s(int from, int to, double send_s, std::int64_t bytes, double delay_s) {
  if (!limited()) return send_s + delay_s;
  const double transmit_s = static_cast<double>(bytes) / bytes_per_s_;
  double& up = uplink_free_s_[static_cast<std::size_t>(from)];
  double& down = downlink_free_s_[static_cast<std::size_t>(to)];
  up = std::max(send_s, up) + transmit_s;
  // The downlink takes the bytes as they come (no faster than the uplink sends them), and
  // needs transmit_s of its own once it is done with earlier messages.
  down = std::max(up + delay_s, down + transmit_s);
  return down;
}

}  // namespace fastk::consensus
