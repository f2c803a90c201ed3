// Processor sharing of simulated cores (simulation/cpu_pool.h).
#include "simulation/cpu_pool.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace fastk::simulation {
namespace {

// Runs the pool until it is empty; returns the finish time of each job, by id.
std::vector<double> finish_times(CpuPool& pool, std::size_t jobs) {
  std::vector<double> at(jobs, -1);
  while (const auto next = pool.next_finish()) {
    at[next->job] = next->at_s;
    pool.finish(*next);
  }
  return at;
}

TEST(CpuPoolTest, AJobAloneRunsAtFullSpeed) {
  CpuPool pool({1.0});
  pool.start(0, 2.5, 1.0);
  EXPECT_DOUBLE_EQ(finish_times(pool, 1)[0], 3.5);
}

TEST(CpuPoolTest, JobsOnOneCoreShareIt) {
  CpuPool pool({1.0});
  pool.start(0, 1.0, 0.0);
  pool.start(0, 3.0, 0.0);
  // Both at half speed until the first is done at 2; the second then has 2 left alone.
  const auto at = finish_times(pool, 2);
  EXPECT_DOUBLE_EQ(at[0], 2.0);
  EXPECT_DOUBLE_EQ(at[1], 4.0);
}

TEST(CpuPoolTest, AJobArrivingLaterSlowsTheOthersFromThen) {
  CpuPool pool({1.0});
  pool.start(0, 2.0, 0.0);
  pool.start(0, 0.5, 1.0);  // job 0 has 1 left; both at half speed: job 1 done at 2
  const auto at = finish_times(pool, 2);
  EXPECT_DOUBLE_EQ(at[1], 2.0);
  EXPECT_DOUBLE_EQ(at[0], 2.5);  // 0.5 left at 2, alone
}

TEST(CpuPoolTest, MoreCoresThanJobsMeansFullSpeed) {
  CpuPool pool({2.0});
  pool.start(0, 1.0, 0.0);
  pool.start(0, 1.0, 0.0);
  pool.start(0, 1.0, 0.0);  // three jobs on two cores: 2/3 each
  const auto at = finish_times(pool, 3);
  for (double t : at) EXPECT_DOUBLE_EQ(t, 1.5);
}

TEST(CpuPoolTest, GroupsDoNotShare) {
  CpuPool pool({1.0, 1.0});
  pool.start(0, 1.0, 0.0);
  pool.start(1, 1.0, 0.0);
  const auto at = finish_times(pool, 2);
  EXPECT_DOUBLE_EQ(at[0], 1.0);
  EXPECT_DOUBLE_EQ(at[1], 1.0);
}

TEST(CpuPoolTest, UnlimitedGroupRunsEveryJobAtFullSpeed) {
  CpuPool pool({0.0});
  for (int j = 0; j < 5; ++j) pool.start(0, 1.0, 0.0);
  for (double t : finish_times(pool, 5)) EXPECT_DOUBLE_EQ(t, 1.0);
}

TEST(CpuPoolTest, TiesComeOutInStartOrder) {
  CpuPool pool({1.0});
  pool.start(0, 1.0, 0.0);
  pool.start(0, 1.0, 0.0);
  const auto first = pool.next_finish();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->job, 0u);
}

TEST(CpuPoolTest, MisuseIsRejected) {
  EXPECT_THROW(CpuPool({-1.0}), std::invalid_argument);
  CpuPool pool({1.0});
  EXPECT_THROW(pool.start(1, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(pool.start(0, -1.0, 0.0), std::invalid_argument);
  pool.start(0, 1.0, 0.0);
  pool.start(0, 2.0, 0.0);
  EXPECT_THROW(pool.finish({2.0, 1, 0}), std::logic_error);  // not the next to finish
}

}  // namespace
}  // namespace fastk::simulation
