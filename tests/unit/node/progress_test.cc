#include "node/launch/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fastk::node {
namespace {

using ::testing::HasSubstr;

TEST(Progress, FormatAndParseRoundTrip) {
  PeerProgress p;
  p.iteration = 120;
  p.iterations = 600;
  p.loss = 0.5321;
  p.accuracy = 0.8123;
  p.elapsed_s = 10.5;
  p.waiting_s = 2.25;
  p.mean_backup = 0.75;
  auto q = parse_progress(format_progress(p));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->iteration, 120);
  EXPECT_EQ(q->iterations, 600);
  EXPECT_DOUBLE_EQ(q->loss, 0.5321);
  EXPECT_DOUBLE_EQ(q->accuracy, 0.8123);
  EXPECT_DOUBLE_EQ(q->waiting_s, 2.25);
  EXPECT_DOUBLE_EQ(q->mean_backup, 0.75);
}

TEST(Progress, MissingValuesStayNanAndUnknownKeysAreIgnored) {
  auto q = parse_progress("@progress iteration=3 future_key=abc");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->iteration, 3);
  EXPECT_TRUE(std::isnan(q->accuracy));
  EXPECT_TRUE(std::isnan(parse_progress(format_progress(PeerProgress{}))->accuracy));
}

TEST(Progress, OrdinaryAndMalformedLinesAreNotProgress) {
  EXPECT_FALSE(parse_progress("iteration=3"));
  EXPECT_FALSE(parse_progress("@progress iteration=x"));
  EXPECT_FALSE(parse_progress("@progress iteration"));
  EXPECT_FALSE(parse_progress("@progress loss=0.5junk"));
}

TEST(Progress, SummaryShowsTheSpreadLossAccuracyRateAndWaiting) {
  PeerProgress a{.iteration = 100,
                 .iterations = 600,
                 .loss = 0.4,
                 .accuracy = NAN,
                 .elapsed_s = 10,
                 .waiting_s = 1,
                 .mean_backup = 0};
  PeerProgress b = a;
  b.iteration = 140;
  b.loss = 0.6;
  b.accuracy = 0.81;
  std::string line = summarize_progress({a, b, std::nullopt}, 3);
  EXPECT_THAT(line, HasSubstr("peers 3/3 running"));
  EXPECT_THAT(line, HasSubstr("iteration 100..140/600"));
  EXPECT_THAT(line, HasSubstr("loss 0.5000"));
  EXPECT_THAT(line, HasSubstr("accuracy 81.00%"));
  EXPECT_THAT(line, HasSubstr("12.0 it/s per peer"));
  EXPECT_THAT(line, HasSubstr("waiting 10%"));
  EXPECT_THAT(summarize_progress({std::nullopt}, 1), HasSubstr("starting"));
}

}  // namespace
}  // namespace fastk::node
