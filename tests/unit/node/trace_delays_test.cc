// The times a replay takes from a record (node/sim/trace_delays.h): a gradient from its
// iteration's start to the moment it was taken, a message from its sender's send to its
// receiver's take, a timer when the record's fired, and what a message the record never
// delivered takes.
#include "node/sim/trace_delays.h"

#include <gtest/gtest.h>

namespace fastk::node::sim {
namespace {

// Two peers; peer 0 began at 0 and peer 1 at 0.5 (run clock). Iteration k of peer i starts at
// began + k, takes its gradient 0.25 later and updates 0.5 later.
RecordedRun two_peers(consensus::UpdateOrder order = consensus::UpdateOrder::kCombineThenAdapt) {
  RecordedRun run;
  run.config.consensus.protocol.order = order;
  run.peers.resize(2);
  run.peers[1].began_s = 0.5;
  for (auto& p : run.peers) {
    for (int k = 0; k < 4; ++k) {
      const double t = p.began_s + k;
      p.iterations.push_back({t, t + 0.25, t + 0.5, 1, {}});
    }
  }
  // Peer 1 took peer 0's tags 0 and 2 (tag 1 was superseded by 2), nothing from tag 3 on.
  run.arrivals[{1, 0}] = {{0, 0.125}, {2, 2.75}};
  run.arrivals[{0, 1}] = {{0, 0.75}, {1, 1.75}, {2, 2.75}, {3, 3.75}};
  run.goodbyes[{0, 1}] = 4.0;
  run.timers_fired_s = {{1.3}, {}};
  return run;
}

TEST(TraceDelays, GradientsAndMessagesTakeWhatTheyTookInTheRecord) {
  const RecordedRun run = two_peers();
  TraceDelays trace(run, true);
  EXPECT_DOUBLE_EQ(trace.compute_time_s(1, 2), 0.25);
  EXPECT_THROW(trace.compute_time_s(1, 4), std::out_of_range);
  EXPECT_DOUBLE_EQ(trace.link_delay_s(0, 1, 2), 0.75);  // sent at 2, taken at 2.75
  EXPECT_DOUBLE_EQ(trace.link_delay_s(1, 0, 1), 0.25);  // sent at 1.5, taken at 1.75
  EXPECT_DOUBLE_EQ(trace.link_delay_s(0, 1, 0), 0.125);
  EXPECT_DOUBLE_EQ(trace.goodbye_delay_s(1, 0), 4.0 - 3.5 - 0.5);  // after its last update
  EXPECT_DOUBLE_EQ(trace.goodbye_delay_s(0, 1), 0.0);              // none recorded
}

TEST(TraceDelays, AdaptThenCombineSendsWhenTheGradientIsTaken) {
  const RecordedRun run = two_peers(consensus::UpdateOrder::kAdaptThenCombine);
  TraceDelays trace(run, true);
  EXPECT_DOUBLE_EQ(trace.link_delay_s(0, 1, 2), 0.5);  // sent at 2.25, taken at 2.75
}

TEST(TraceDelays, MessagesTheRecordNeverDeliveredAreDroppedOrComeLate) {
  const RecordedRun run = two_peers();
  TraceDelays as_recorded(run, true);
  // Tag 1 was superseded by tag 2: not delivered in a replay of the record.
  EXPECT_FALSE(as_recorded.delivered(0, 1, 1));
  EXPECT_TRUE(as_recorded.delivered(0, 1, 2));
  EXPECT_EQ(as_recorded.superseded(), 1);
  // Tag 3 came after peer 1's last update (3.5 + 0.5 = 4.0): after it, at least the link's
  // median (0.125 and 0.75: the upper one, 0.75).
  EXPECT_GE(as_recorded.link_delay_s(0, 1, 3), 4.0 - 3.0);
  EXPECT_EQ(as_recorded.without_arrival(), 1);
  // Another policy may need tag 1: it comes with tag 2.
  TraceDelays other(run, false);
  EXPECT_TRUE(other.delivered(0, 1, 1));
  EXPECT_DOUBLE_EQ(other.link_delay_s(0, 1, 1), 2.75 - 1.0);
}

TEST(TraceDelays, ATimerFiresWhenTheRecordsDidIfThatWasSoonAfter) {
  const RecordedRun run = two_peers();
  TraceDelays trace(run, true);
  EXPECT_NEAR(trace.timer_latency_s(0, 1.29), 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(trace.timer_latency_s(0, 1.0), 0.0);  // 0.3 s off: another timer's
  EXPECT_DOUBLE_EQ(trace.timer_latency_s(1, 1.29), 0.0);
}

}  // namespace
}  // namespace fastk::node::sim
