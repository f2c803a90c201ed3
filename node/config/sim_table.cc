// [sim]: how `fastk sim` runs.
#include "node/config/tables.h"

namespace fastk::node {

void read_sim_table(TableReader& t, SimSettings& settings, const std::filesystem::path& base_dir) {
  t.read("threads", settings.threads, 1, 256);
  t.read("per_peer_eval", settings.per_peer_eval);
  t.read("peer_files", settings.peer_files, 1, 1'000'000);
  t.read("calibration", settings.calibration);
  t.read("link_rate_mbit", settings.link_rate_mbit, 0.0, 1e6);
  if (!settings.calibration.empty()) {
    settings.calibration = resolve_path(settings.calibration, base_dir);
  }
  // Stop rules and targets apply to real runs too since they moved to [run].
  for (const char* moved :
       {"eval_interval_s", "target_accuracy", "target_loss", "stop_at_target"}) {
    if (t.has(moved)) {
      t.errors().add(t.path_of(moved),
                     std::string("moved to run.") + moved + " (it applies to real runs too)");
    }
  }
  t.finish();
}

nlohmann::ordered_json sim_table_json(const SimSettings& s) {
  // threads is left out: it changes only the speed, never an output byte.
  return {{"per_peer_eval", s.per_peer_eval},
          {"peer_files", s.peer_files},
          {"calibration", s.calibration},
          {"link_rate_mbit", s.link_rate_mbit}};
}

}  // namespace fastk::node
