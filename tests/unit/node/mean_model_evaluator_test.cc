// The mean model of a real run from its peers' snapshots: which model of each peer counts at
// an instant, who takes which instant (the live evaluation, the idle-time thread, the
// evaluation after the run), and the idle-time thread itself, on run folders written by hand.
#include "node/launch/mean_model_evaluator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "node/launch/idle_evaluation.h"
#include "node/launch/snapshots.h"
#include "node/metrics/output_files.h"
#include "tests/support/temp_dir.h"

namespace fastk::node {
namespace {

// A run folder written by hand: two peers of a logistic regression, evaluation instants at
// 1000 + j seconds.
struct HandMadeRun {
  std::filesystem::path dir = testutil::fresh_test_dir();
  ExperimentConfig config;
  std::size_t parameters = 4 * 3 + 3;
  HandMadeRun() {
    config.data.kind = learning::DatasetKind::kGaussianMixture;
    config.data.train_samples = 60;
    config.data.test_samples = 30;
    config.data.dim = 4;
    config.data.classes = 3;
    config.model.kind = learning::ModelKind::kLogisticRegression;
    for (int i = 0; i < 2; ++i) std::filesystem::create_directories(peer(i));
  }
  std::filesystem::path peer(int i) const { return dir / "peers" / ("peer-" + std::to_string(i)); }
  std::vector<float> model() const { return std::vector<float>(parameters, 0.1f); }
  // The peer's summary: it has ended, its last update at `last_update_unix_s`.
  void end(int i, double last_update_unix_s, std::int64_t iterations) const {
    metrics::write_model(peer(i) / "model-final.f32", model());
    metrics::write_json_file(peer(i) / "summary.json", {{"first_iteration_unix_s", 1000.0},
                                                        {"last_update_unix_s", last_update_unix_s},
                                                        {"iterations", iterations}});
  }
};

// Both peers save instants [from, to), at iteration instant - from.
void save_both(SnapshotWriter& a, SnapshotWriter& b, const HandMadeRun& run, std::int64_t from,
               std::int64_t to) {
  for (std::int64_t instant = from; instant < to; ++instant) {
    a.write(instant, instant - from, run.model());
    b.write(instant, instant - from, run.model());
  }
}

std::vector<double> mean_iterations(const std::vector<metrics::Evaluation>& evaluations) {
  std::vector<double> out;
  for (const auto& e : evaluations) out.push_back(e.mean_iteration);
  return out;
}

TEST(MeanModelEvaluator, EachPeerCountsWithItsLatestSnapshotAtOrBeforeTheInstant) {
  HandMadeRun run;
  SnapshotWriter early(run.peer(0)), late(run.peer(1));
  // Peer 0 started in instant 10, peer 1 in instant 11 (its initial model, iteration 0).
  early.write(10, 0, run.model());
  early.write(11, 4, run.model());
  early.write(13, 12, run.model());
  late.write(11, 0, run.model());
  MeanModelEvaluator evaluator(run.config, run.dir, 2, 1000.0, 1.0);
  // Instant 10 is before peer 1 started; 11 is known for both; 12 not yet: peer 1 may still
  // save one at 12.
  EXPECT_EQ(mean_iterations(evaluator.evaluate_new()), std::vector<double>{(4 + 0) / 2.0});
  late.write(12, 3, run.model());
  // 12: peer 0's latest at or before it is 11 (iteration 4); 13 is not known for peer 1.
  EXPECT_EQ(mean_iterations(evaluator.evaluate_new()), std::vector<double>{(4 + 3) / 2.0});
  // Peer 1 ends with its last update at 1012.5: from instant 13 on, its final model counts.
  run.end(1, 1012.5, 7);
  const auto after = evaluator.evaluate_after_run(1014.0, true);
  EXPECT_EQ(mean_iterations(after.instants), std::vector<double>{(12 + 7) / 2.0});
  EXPECT_DOUBLE_EQ(after.instants[0].time_s, 1013.0);
  // Peer 0 has no final model: the mean of the final models lacks it.
  ASSERT_TRUE(after.final_models.has_value());
  EXPECT_EQ(after.final_models->peers, 1);
  EXPECT_DOUBLE_EQ(after.final_models->time_s, 1014.0);
}

TEST(MeanModelEvaluator, WhileRunningOnlyTheNewestKnownInstantIsEvaluatedTheRestAfter) {
  HandMadeRun run;
  SnapshotWriter a(run.peer(0)), b(run.peer(1));
  save_both(a, b, run, 20, 24);
  MeanModelEvaluator evaluator(run.config, run.dir, 2, 1000.0, 1.0);
  // 20-23 are known (23 is saved by both); only 23 is evaluated during the run.
  EXPECT_EQ(mean_iterations(evaluator.evaluate_new()), std::vector<double>{3.0});
  EXPECT_TRUE(evaluator.evaluate_new().empty());
  // After the run: the skipped ones, in order, and none twice.
  EXPECT_EQ(mean_iterations(evaluator.evaluate_after_run(2000.0, true).instants),
            (std::vector<double>{0.0, 1.0, 2.0}));
}

// The idle-time evaluation's step takes the oldest known instant; what it took, neither the
// live evaluation nor the one after the run takes again.
TEST(MeanModelEvaluator, TheOldestKnownInstantIsTakenOnceWhoeverAsks) {
  HandMadeRun run;
  SnapshotWriter a(run.peer(0)), b(run.peer(1));
  save_both(a, b, run, 20, 23);
  a.write(23, 3, run.model());  // 23: peer 1 may still save one there
  MeanModelEvaluator evaluator(run.config, run.dir, 2, 1000.0, 1.0);
  auto model = evaluator.clone_model();
  const MeanModelEvaluator::Step first = evaluator.evaluate_oldest_known(*model);
  ASSERT_TRUE(first.took);
  ASSERT_TRUE(first.evaluation.has_value());
  EXPECT_DOUBLE_EQ(first.evaluation->time_s, 1020.0);
  EXPECT_EQ(mean_iterations(evaluator.evaluate_new()), std::vector<double>{2.0});  // 22
  EXPECT_DOUBLE_EQ(evaluator.evaluate_oldest_known(*model).evaluation->time_s, 1021.0);
  EXPECT_FALSE(evaluator.evaluate_oldest_known(*model).took);  // 23 is not known yet
  b.write(23, 3, run.model());
  EXPECT_DOUBLE_EQ(evaluator.evaluate_oldest_known(*model).evaluation->time_s, 1023.0);
  EXPECT_TRUE(evaluator.evaluate_after_run(2000.0, true).instants.empty());
}

// A real thread under SCHED_IDLE: it evaluates the instants as they become known, and after
// wind_down takes no new one.
TEST(IdleEvaluation, EvaluatesKnownInstantsAsTheyComeAndStopsTakingThemWhenWoundDown) {
  HandMadeRun run;
  SnapshotWriter a(run.peer(0)), b(run.peer(1));
  save_both(a, b, run, 30, 33);
  MeanModelEvaluator evaluator(run.config, run.dir, 2, 1000.0, 1.0);
  IdleEvaluation idle(evaluator, 2);
  std::vector<metrics::Evaluation> made;
  const auto wait_for = [&](std::size_t count) {
    for (int tries = 0; tries < 500 && made.size() < count; ++tries) {  // at most 5 s
      for (auto& e : idle.take()) made.push_back(std::move(e));
      if (made.size() < count) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  wait_for(3);
  // Two threads: each instant once, in whatever order they finish.
  std::sort(made.begin(), made.end(),
            [](const auto& x, const auto& y) { return x.time_s < y.time_s; });
  EXPECT_EQ(mean_iterations(made), (std::vector<double>{0.0, 1.0, 2.0}));
  a.write(33, 3, run.model());
  b.write(33, 3, run.model());
  wait_for(4);
  EXPECT_EQ(made.size(), 4u);
  idle.wind_down();
  a.write(34, 4, run.model());
  b.write(34, 4, run.model());
  EXPECT_TRUE(idle.stop().empty());
  EXPECT_EQ(mean_iterations(evaluator.evaluate_after_run(2000.0, true).instants),
            std::vector<double>{4.0});
}

}  // namespace
}  // namespace fastk::node
