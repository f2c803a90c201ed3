// The receiver's hold of injected link delays (node/peer/delayed_inbox.h): each message waits
// its link's seeded delay, but never leaves before one that came earlier from the same
// neighbour, and a BYE follows the last held message.
#include "node/peer/delayed_inbox.h"

#include <gtest/gtest.h>

namespace fastk::node::peer {
namespace {

using stragglers::DelayModel;
using stragglers::DelaySpec;

consensus::Message model_from(int from, std::int64_t tag) {
  return consensus::ModelArrived{from, tag, nullptr};
}

std::vector<std::int64_t> release_all(DelayedInbox& inbox) {
  std::vector<std::int64_t> tags;
  while (auto next = inbox.next_release_s()) {
    auto message = inbox.release(*next);
    if (!message) break;
    const bool bye = std::holds_alternative<consensus::NeighbourLeft>(*message);
    tags.push_back(bye ? -1 : consensus::tag_of(*message));
  }
  return tags;
}

TEST(DelayedInbox, ALaterMessageWithAShorterDelayWaitsForTheEarlierOne) {
  DelayModel delays(DelaySpec{.link_jitter_s = 1.0, .seed = 7}, 2);
  // Tags whose draws would swap them: tag k's delay beyond tag k+1's.
  std::int64_t k = 0;
  while (k < 1000 && delays.link_delay_s(1, 0, k) <= delays.link_delay_s(1, 0, k + 1) + 0.1) ++k;
  ASSERT_LT(k, 1000) << "no pair of draws to swap";
  DelayedInbox inbox(&delays, 0);
  EXPECT_FALSE(inbox.admit(model_from(1, k), 0.0));
  EXPECT_FALSE(inbox.admit(model_from(1, k + 1), 0.0));
  EXPECT_FALSE(inbox.admit(consensus::NeighbourLeft{1, k + 1}, 0.0));
  // Nothing before tag k's own release; then k, k+1 (held to the same instant), the BYE.
  EXPECT_DOUBLE_EQ(*inbox.next_release_s(), delays.link_delay_s(1, 0, k));
  EXPECT_FALSE(inbox.release(delays.link_delay_s(1, 0, k + 1)).has_value());
  EXPECT_EQ(release_all(inbox), (std::vector<std::int64_t>{k, k + 1, -1}));
}

TEST(DelayedInbox, WithoutLinkDelaysEveryMessagePassesAtOnce) {
  DelayModel delays(DelaySpec{}, 2);
  DelayedInbox inbox(&delays, 0);
  const auto passed = inbox.admit(model_from(1, 3), 5.0);
  ASSERT_TRUE(passed.has_value());
  EXPECT_EQ(consensus::tag_of(*passed), 3);
  EXPECT_FALSE(inbox.next_release_s().has_value());
}

}  // namespace
}  // namespace fastk::node::peer
