// [run]: name, seed, iterations, output folder.
#include "node/config/tables.h"

namespace fastk::node {

void read_run_table(TableReader& t, RunConfig& run) {
  t.read("name", run.name);
  t.read("seed", run.seed);
  t.read("iterations", run.iterations, 1);
  t.read("output", run.output);
  if (run.name.empty() || run.name.find('/') != std::string::npos) {
    t.errors().add(t.path_of("name"), "expected a non-empty name without '/'");
  }
  t.finish();
}

}  // namespace fastk::node
