// [optimizer]: SGD learning rate and schedule, momentum, weight decay, mini-batch size.
#include "node/config/tables.h"

namespace fastk::node {
namespace {

// `milestones = [0.5, 0.75]`: increasing fractions of the run in (0, 1].
void read_milestones(TableReader& t, std::vector<double>& milestones) {
  const toml::node* n = t.node("milestones");
  if (!n) return;
  const toml::array* array = n->as_array();
  if (!array) {
    t.errors().add(t.path_of("milestones"),
                   "expected an array of fractions of the run, e.g. [0.5, 0.75]");
    return;
  }
  std::vector<double> fractions;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto value = (*array)[i].value<double>();  // integers too: [1] is the end
    const double before = fractions.empty() ? 0.0 : fractions.back();
    if (!value || !(*value > before && *value <= 1.0)) {
      t.errors().add(t.path_of("milestones") + "[" + std::to_string(i) + "]",
                     "expected a fraction of the run in (0, 1], above the one before");
      return;
    }
    fractions.push_back(*value);
  }
  milestones = fractions;
}

}  // namespace

void read_optimizer_table(TableReader& t, learning::OptimizerSpec& spec,
                          std::uint64_t seed_default) {
  spec.seed = seed_default;
  t.read("lr", spec.lr, 1e-12);
  t.read_choice<learning::ScheduleKind>("schedule", spec.schedule, learning::parse_schedule_kind);
  t.read("step_iterations", spec.step_iterations, 1);
  t.read("gamma", spec.gamma, 0.0, 1.0);
  read_milestones(t, spec.milestones);
  t.read("min_lr", spec.min_lr, 0.0);
  t.read("warmup_iterations", spec.warmup_iterations, 0);
  t.read("momentum", spec.momentum, 0.0, 0.999999);
  t.read("nesterov", spec.nesterov);
  t.read("weight_decay", spec.weight_decay, 0.0);
  t.read("batch_size", spec.batch_size, 1, 1'000'000);
  t.read("seed", spec.seed);
  t.finish();
}

nlohmann::ordered_json optimizer_table_json(const learning::OptimizerSpec& o) {
  return {{"lr", o.lr},
          {"schedule", learning::to_string(o.schedule)},
          {"step_iterations", o.step_iterations},
          {"gamma", o.gamma},
          {"milestones", o.milestones},
          {"min_lr", o.min_lr},
          {"warmup_iterations", o.warmup_iterations},
          {"momentum", o.momentum},
          {"nesterov", o.nesterov},
          {"weight_decay", o.weight_decay},
          {"batch_size", o.batch_size},
          {"seed", o.seed}};
}

}  // namespace fastk::node
