// [sim]: evaluation and reporting of `fastk sim`.
#include "node/config/tables.h"

namespace fastk::node {

void read_sim_table(TableReader& t, sim::SimSettings& settings) {
  t.read("threads", settings.threads, 1, 256);
  t.read("eval_interval_s", settings.eval_interval_s, 1e-9);
  t.read("target_accuracy", settings.target_accuracy, 0.0, 1.0);
  t.read("target_loss", settings.target_loss, 0.0);
  t.read("stop_at_target", settings.stop_at_target);
  t.read("per_peer_eval", settings.per_peer_eval);
  t.finish();
}

}  // namespace fastk::node
