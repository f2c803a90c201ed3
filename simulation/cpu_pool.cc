#include "simulation/cpu_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fastk::simulation {

CpuPool::CpuPool(std::vector<double> group_cores) {
  for (std::size_t g = 0; g < group_cores.size(); ++g) {
    if (!(group_cores[g] >= 0)) {
      throw std::invalid_argument("CpuPool: group " + std::to_string(g) +
                                  " has a negative core count");
    }
    Group group;
    group.cores = group_cores[g];
    groups_.push_back(std::move(group));
  }
}

double CpuPool::rate(const Group& g) const {
  const auto n = static_cast<double>(g.jobs.size());
  if (g.cores <= 0 || n <= g.cores) return 1.0;
  return g.cores / n;
}

void CpuPool::advance(Group& g, double now_s) {
  if (now_s > g.updated_s) {
    if (!g.jobs.empty()) g.work_done += (now_s - g.updated_s) * rate(g);
    g.updated_s = now_s;
  }
}

CpuPool::JobId CpuPool::start(int group, double work_s, double now_s) {
  if (group < 0 || group >= groups()) {
    throw std::invalid_argument("CpuPool: no group " + std::to_string(group));
  }
  if (!(work_s >= 0)) throw std::invalid_argument("CpuPool: negative work");
  Group& g = groups_[static_cast<std::size_t>(group)];
  advance(g, now_s);
  const JobId id = next_id_++;
  g.jobs.push({g.work_done + work_s, id});
  return id;
}

std::optional<CpuPool::Finish> CpuPool::group_finish(int group) const {
  const Group& g = groups_[static_cast<std::size_t>(group)];
  if (g.jobs.empty()) return std::nullopt;
  const Job& first = g.jobs.top();
  const double remaining = std::max(0.0, first.done_at_work - g.work_done);
  return Finish{g.updated_s + remaining / rate(g), first.id, group};
}

std::optional<CpuPool::Finish> CpuPool::next_finish() const {
  std::optional<Finish> best;
  for (int group = 0; group < groups(); ++group) {
    const auto f = group_finish(group);
    if (f && (!best || f->at_s < best->at_s || (f->at_s == best->at_s && f->job < best->job))) {
      best = f;
    }
  }
  return best;
}

void CpuPool::finish(const Finish& done) {
  Group& g = groups_.at(static_cast<std::size_t>(done.group));
  if (g.jobs.empty() || g.jobs.top().id != done.job) {
    throw std::logic_error("CpuPool: finish() of a job that is not the next to finish");
  }
  advance(g, done.at_s);
  g.work_done = std::max(g.work_done, g.jobs.top().done_at_work);
  g.jobs.pop();
}

int CpuPool::active(int group) const {
  return static_cast<int>(groups_.at(static_cast<std::size_t>(group)).jobs.size());
}

}  // namespace fastk::simulation
