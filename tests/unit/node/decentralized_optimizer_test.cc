#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "node/training/peer_trainer.h"

namespace fastk::node::training {
namespace {

using ::testing::HasSubstr;

std::string error_of(const learning::OptimizerSpec& o) {
  try {
    check_optimizer(o);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(DecentralizedOptimizer, MomentumSchedulesAndWeightDecayAreAcceptedAndBadValuesNamed) {
  learning::OptimizerSpec o;
  EXPECT_EQ(error_of(o), "");
  o.momentum = 0.9;
  o.nesterov = true;
  o.schedule = learning::ScheduleKind::kCosine;
  o.warmup_iterations = 50;
  o.weight_decay = 1e-4;
  EXPECT_EQ(error_of(o), "");
  o.momentum = 1.0;
  EXPECT_THAT(error_of(o), HasSubstr("optimizer.momentum"));
  o = {};
  o.lr = 0;
  EXPECT_THAT(error_of(o), HasSubstr("optimizer.lr"));
  o = {};
  o.warmup_iterations = -1;
  EXPECT_THAT(error_of(o), HasSubstr("optimizer.warmup_iterations"));
}

}  // namespace
}  // namespace fastk::node::training
