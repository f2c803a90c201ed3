// [run]: name, seed, stop rules, evaluation and target, output folder, checkpoints.
#include "node/config/tables.h"

namespace fastk::node {

double RunConfig::evaluation_interval_s(double fallback_s) const {
  if (eval_interval_s > 0) return eval_interval_s;
  return duration_s > 0 ? duration_s / 20 : fallback_s;
}

void read_run_table(TableReader& t, RunConfig& run) {
  t.read("name", run.name);
  t.read("seed", run.seed);
  t.read("iterations", run.iterations, 1);
  t.read("duration_s", run.duration_s, 0.0);
  t.read("eval_interval_s", run.eval_interval_s, 0.0);
  t.read("target_accuracy", run.target_accuracy, 0.0, 1.0);
  t.read("target_loss", run.target_loss, 0.0);
  t.read("stop_at_target", run.stop_at_target);
  t.read("neighbours_csv", run.neighbours_csv);
  t.read("output", run.output);
  t.read("checkpoint_every", run.checkpoint_every, 0);
  t.read("checkpoint_every_s", run.checkpoint_every_s, 0.0);
  if (run.stop_at_target && !run.has_target()) {
    t.errors().add(t.path_of("stop_at_target"),
                   "needs run.target_accuracy or run.target_loss to stop at");
  }
  if (run.eval_interval_s > 0 && run.eval_interval_s < 1e-3) {
    // Each instant costs every peer a model snapshot: a finer grid floods the disk.
    t.errors().add(t.path_of("eval_interval_s"), "expected 0 (automatic) or at least 0.001 s");
  }
  // The run folder is output/name, and fastk run empties its peers/ folder first: a name
  // must not reach outside the output folder.
  if (run.name.empty() || run.name.find('/') != std::string::npos || run.name == "." ||
      run.name == "..") {
    t.errors().add(t.path_of("name"),
                   "expected a folder name: not empty, without '/', not '.' "
                   "or '..' (got '" +
                       run.name + "')");
  }
  t.finish();
}

nlohmann::ordered_json run_table_json(const RunConfig& run, double eval_interval_s) {
  return {{"name", run.name},
          {"seed", run.seed},
          {"iterations", run.iterations},
          {"duration_s", run.duration_s},
          {"eval_interval_s", eval_interval_s},
          {"target_accuracy", run.target_accuracy},
          {"target_loss", run.target_loss},
          {"stop_at_target", run.stop_at_target},
          {"neighbours_csv", run.neighbours_csv},
          {"output", run.output},
          {"checkpoint_every", run.checkpoint_every},
          {"checkpoint_every_s", run.checkpoint_every_s}};
}

}  // namespace fastk::node
