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

TEST(DecentralizedOptimizer, PlainSgdIsAcceptedAndAnythingMoreIsRefusedByName) {
  learning::OptimizerSpec o;
  EXPECT_EQ(error_of(o), "");
  o.momentum = 0.9;
  EXPECT_THAT(error_of(o), HasSubstr("optimizer.momentum"));
  o = {};
  o.schedule = learning::ScheduleKind::kCosine;
  EXPECT_THAT(error_of(o), HasSubstr("optimizer.schedule"));
  o = {};
  o.weight_decay = 1e-4;
  EXPECT_THAT(error_of(o), HasSubstr("optimizer.weight_decay"));
}

}  // namespace
}  // namespace fastk::node::training
