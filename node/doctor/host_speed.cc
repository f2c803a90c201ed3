#include "node/doctor/host_speed.h"

#include <cstdio>

namespace fastk::node::doctor {
namespace {

std::string ms(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", 1000 * s);
  return text;
}

}  // namespace

SpeedFindings judge_speeds(const std::vector<HostSpeed>& hosts) {
  SpeedFindings f;
  const HostSpeed* fastest = nullptr;
  for (const auto& h : hosts) {
    if (!h.gradient.failure.empty()) {
      f.problems.push_back(h.host +
                           (h.gradient.crashed ? " would crash: a gradient there, with the fastk "
                                                 "it runs, was "
                                               : " cannot time a gradient: its child process ") +
                           h.gradient.failure);
    }
    if (!h.gradient.measured) continue;
    if (!fastest || h.gradient.plain_s < fastest->gradient.plain_s) fastest = &h;
    if (!f.slowest || h.gradient.plain_s > f.slowest->gradient.plain_s) f.slowest = h;
  }
  for (const auto& h : hosts) {
    if (!h.gradient.measured || !fastest || fastest->gradient.plain_s <= 0) continue;
    const double ratio = h.gradient.plain_s / fastest->gradient.plain_s;
    if (ratio < kStragglerRatio) continue;
    char times[64];
    std::snprintf(times, sizeof times, "%.1fx", ratio);
    f.notes.push_back(
        h.host + " is a straggler by hardware: a gradient takes " + ms(h.gradient.plain_s) +
        " there with kernels " + h.isa.kernels + ", " + times + " the fastest host's (" +
        fastest->host + ", " + ms(fastest->gradient.plain_s) + " with kernels " +
        fastest->isa.kernels +
        "); `fastk sim` predicts such a LAN from `--hosts-json` (docs/simulation.md)");
  }
  return f;
}

nlohmann::ordered_json hosts_json(const std::vector<HostSpeed>& hosts) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& h : hosts) {
    if (!h.gradient.measured) continue;
    list.push_back({{"host", h.host},
                    {"gradient_s", h.gradient.plain_s},
                    {"gradient_noise_s", h.gradient.with_noise_s},
                    {"kernels", h.isa.kernels},
                    {"cpu", h.isa.cpu},
                    {"march", h.isa.march},
                    {"launching_machine", h.launching_machine}});
  }
  return {{"hosts", list}};
}

}  // namespace fastk::node::doctor
