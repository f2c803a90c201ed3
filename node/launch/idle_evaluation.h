// The mean model evaluated while the peers run, in time the machine would otherwise leave
// idle. Evaluating an instant costs a pass over the test set; with the quickstart's 0.1 s
// interval the instants left for after the run were most of the time `fastk run` took after
// the training. A thread under SCHED_IDLE runs only when a core has nothing else to run (a
// peer waiting for its neighbours, sleeping out an injected slowdown, or done while a
// straggler goes on), and the kernel takes the core back the moment a peer wants it, so the
// peers' timing is what it would be without it. One such thread per usable CPU (at most 8):
// once the first peers are done, several cores can be idle while a straggler finishes.
// Where SCHED_IDLE is refused, nothing is evaluated early.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>
#include <vector>

#include "node/launch/mean_model_evaluator.h"

namespace fastk::node {

class IdleEvaluation {
 public:
  // `threads`: MeanModelEvaluator::evaluation_threads(), or 0 for none (a run with peers on
  // other hosts, whose folders arrive only after the run).
  IdleEvaluation(MeanModelEvaluator& evaluator, std::size_t threads);
  IdleEvaluation(const IdleEvaluation&) = delete;
  IdleEvaluation& operator=(const IdleEvaluation&) = delete;

  // The evaluations made since the last call (the target check and the progress line).
  std::vector<metrics::Evaluation> take();
  // The peers have exited: the threads take no new instant and finish the ones they are on,
  // at normal priority where the kernel allows it (root, or an RLIMIT_NICE allowing nice 0),
  // so that they are not starved by the evaluation of the rest.
  void wind_down();
  // wind_down, then waits for the threads and returns what take() would; rethrows the first
  // error a thread stopped on.
  std::vector<metrics::Evaluation> stop();

 private:
  void work(const std::stop_token& stop, learning::Model& model);

  MeanModelEvaluator& evaluator_;
  std::vector<std::unique_ptr<learning::Model>> models_;  // one per thread: evaluating uses
                                                          // a model's scratch space
  std::mutex mutex_;
  std::condition_variable_any nothing_ready_;
  std::vector<metrics::Evaluation> made_;
  std::exception_ptr error_;
  std::set<pid_t> thread_ids_;         // those running under SCHED_IDLE; guarded by mutex_
  std::vector<std::jthread> threads_;  // last: started once the members above exist
};

}  // namespace fastk::node
