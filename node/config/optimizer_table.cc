// [optimizer]: SGD learning rate and schedule, momentum, weight decay, mini-batch size.
#include "node/config/tables.h"

namespace fastk::node {

void read_optimizer_table(TableReader& t, learning::OptimizerSpec& spec,
                          std::uint64_t seed_default) {
  spec.seed = seed_default;
  t.read("lr", spec.lr, 1e-12);
  t.read_choice<learning::ScheduleKind>("schedule", spec.schedule, learning::parse_schedule_kind);
  t.read("step_iterations", spec.step_iterations, 1);
  t.read("gamma", spec.gamma, 0.0, 1.0);
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
          {"min_lr", o.min_lr},
          {"warmup_iterations", o.warmup_iterations},
          {"momentum", o.momentum},
          {"nesterov", o.nesterov},
          {"weight_decay", o.weight_decay},
          {"batch_size", o.batch_size},
          {"seed", o.seed}};
}

}  // namespace fastk::node
