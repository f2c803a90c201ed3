#include "node/os/cpu_binding.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fastk::node::os {

std::vector<int> cpu_share(std::span<const int> allowed, int local_index, int local_count) {
  const long cpus = static_cast<long>(allowed.size());
  if (cpus == 0 || local_count <= 0 || local_index < 0 || local_index >= local_count) return {};
  const long first = local_index * cpus / local_count;
  const long end_ceil = ((local_index + 1) * cpus + local_count - 1) / local_count;
  const long last = std::max(first, end_ceil - 1);
  return {allowed.begin() + first, allowed.begin() + last + 1};
}

int usable_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 1;
  return std::max(CPU_COUNT(&mask), 1);
}

std::vector<int> bind_to_cpu_share(int local_index, int local_count) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
    throw std::runtime_error(std::string("cannot read this process's CPUs: ") +
                             std::strerror(errno));
  }
  std::vector<int> allowed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) allowed.push_back(cpu);
  }
  const std::vector<int> share = cpu_share(allowed, local_index, local_count);
  if (share.empty()) throw std::runtime_error("no CPU to bind to");
  CPU_ZERO(&mask);
  for (int cpu : share) CPU_SET(cpu, &mask);
  if (sched_setaffinity(0, sizeof mask, &mask) != 0) {
    throw std::runtime_error("cannot bind to CPUs " + describe_cpus(share) + ": " +
                             std::strerror(errno));
  }
  return share;
}

std::string describe_cpus(std::span<const int> cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace fastk::node::os
