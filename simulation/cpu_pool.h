// The CPUs of simulated machines, shared by processor sharing. A job is an amount of CPU work
// (seconds of one core) run on a group of cores; while n jobs are active on a group of c
// cores, each progresses at min(1, c / n) seconds of work per second of virtual time. That
// is how Linux shares a CPU among runnable threads, and it is what makes 8 peers on 2 cores
// take longer per iteration than 8 peers on 8 (docs/simulation.md §1).
// Pure bookkeeping in virtual time: the caller asks when the next job finishes and tells the
// pool when that time has come.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

namespace fastk::simulation {

class CpuPool {
 public:
  using JobId = std::uint64_t;

  struct Finish {
    double at_s = 0;
    JobId job = 0;
    int group = 0;
  };

  // group_cores[g]: the cores of group g (> 0), or 0 for as many cores as there are jobs
  // (every job at full speed). Throws std::invalid_argument for a negative count.
  explicit CpuPool(std::vector<double> group_cores);

  // Starts a job of `work_s` CPU seconds (>= 0) on `group` at `now_s` (never before the time
  // of the pool's last call). Returns its id.
  JobId start(int group, double work_s, double now_s);
  // The job that finishes first if nothing else starts, or nullopt when no job is active.
  // Jobs finishing at the same time come out in the order they started.
  std::optional<Finish> next_finish() const;
  // Removes the job next_finish() named, at its finish time.
  void finish(const Finish& done);

  int groups() const { return static_cast<int>(groups_.size()); }
  int active(int group) const;

 private:
  struct Job {
    double done_at_work = 0;  // the group's cumulative work per job when this job is done
    JobId id = 0;
  };
  struct LaterJob {
    bool operator()(const Job& a, const Job& b) const {
      return a.done_at_work != b.done_at_work ? a.done_at_work > b.done_at_work : a.id > b.id;
    }
  };
  struct Group {
    double cores = 0;
    double updated_s = 0;  // virtual time of work_done
    double work_done = 0;  // work each active job has received since the group began
    std::priority_queue<Job, std::vector<Job>, LaterJob> jobs;
  };
  double rate(const Group& g) const;
  void advance(Group& g, double now_s);
  std::optional<Finish> group_finish(int group) const;

  std::vector<Group> groups_;
  JobId next_id_ = 0;
};

}  // namespace fastk::simulation
