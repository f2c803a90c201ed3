// What `fastk doctor` concludes from the gradient each host timed with the binary it will run
// (host_check.h GradientCheck): the hosts whose gradient failed (it would crash there: a
// signal, or a binary its CPU refuses), and the stragglers by hardware, whose gradient takes
// kStragglerRatio times the fastest host's or more. Pure logic: the reports are given.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "node/doctor/host_check.h"

namespace fastk::node::doctor {

inline constexpr double kStragglerRatio = 1.5;

struct HostSpeed {
  std::string host;
  GradientCheck gradient;
  IsaCheck isa;
  bool launching_machine = false;  // the machine the doctor (and calibrate) runs on
};

struct SpeedFindings {
  std::vector<std::string> problems;  // a host where the run would crash
  std::vector<std::string> notes;     // a straggler by hardware: it can run, slower
  // The host whose gradient is slowest, and its time (the floor's compute side).
  std::optional<HostSpeed> slowest;
};

SpeedFindings judge_speeds(const std::vector<HostSpeed>& hosts);

// The hosts' figures as `fastk doctor --hosts-json FILE` writes them, for `fastk calibrate
// --hosts FILE` (docs/simulation.md): {"hosts": [{"host", "gradient_s", "gradient_noise_s",
// "kernels", "cpu", "march", "launching_machine"}]}, hosts whose gradient failed left out.
nlohmann::ordered_json hosts_json(const std::vector<HostSpeed>& hosts);

}  // namespace fastk::node::doctor
