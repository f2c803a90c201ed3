// How a peer tells a restarted neighbour from a late one (node/peer/rendezvous.h): a HELLO
// after the neighbour's models means it came back; the HELLOs a late starter sent while this
// peer was not up yet come before its first model and mean nothing more than "hello".
#include "node/peer/rendezvous.h"

#include <gtest/gtest.h>

namespace fastk::node::peer {
namespace {

using wire::MessageType;

TEST(Rendezvous, AHelloAfterANeighboursModelsMeansItCameBack) {
  Rendezvous r(0, {1, 2}, wire::HelloInfo{42, 3});
  // Peer 1 starts late: a burst of queued HELLOs, then its models.
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(r.came_back(1, MessageType::kHello));
  EXPECT_FALSE(r.came_back(1, MessageType::kModel));
  EXPECT_FALSE(r.came_back(1, MessageType::kSharedModel));
  // Killed and restarted: its first HELLO says so, once; the rest of its burst does not.
  EXPECT_TRUE(r.came_back(1, MessageType::kHello));
  EXPECT_FALSE(r.came_back(1, MessageType::kHello));
  // Control messages are not models; other peers and strangers are told apart.
  EXPECT_FALSE(r.came_back(2, MessageType::kHelloAck));
  EXPECT_FALSE(r.came_back(2, MessageType::kHello));
  EXPECT_FALSE(r.came_back(2, MessageType::kCodedGradient));
  EXPECT_TRUE(r.came_back(2, MessageType::kHello));
  EXPECT_FALSE(r.came_back(7, MessageType::kModel));
  EXPECT_FALSE(r.came_back(7, MessageType::kHello));
}

// On a time-varying or directed graph a peer also greets the peers it only sends to; they
// send it nothing until their BYE, so their silence counts only from its own goodbye: a
// long run does not make them "gone" the moment it ends.
TEST(Rendezvous, APeerThatOnlyReceivesIsSilentOnlyFromTheGoodbye) {
  Rendezvous r(0, {1, 2}, wire::HelloInfo{42, 3}, {2});
  r.heard(1, MessageType::kHello, 0.0, 0);
  r.heard(2, MessageType::kHello, 0.0, 0);
  r.heard(1, MessageType::kBye, 100.0, 0);  // a 100 s run; peer 2 said nothing since HELLO
  r.goodbye(100.0);
  EXPECT_FALSE(r.all_gone(100.5, 1.0));
  EXPECT_TRUE(r.all_gone(101.0, 1.0));  // silent for the timeout since the goodbye
  // A peer it receives from is silent from its last message, as before.
  Rendezvous plain(0, {1, 2}, wire::HelloInfo{42, 3});
  plain.heard(1, MessageType::kBye, 100.0, 0);
  plain.heard(2, MessageType::kHello, 0.0, 0);
  plain.goodbye(100.0);
  EXPECT_TRUE(plain.all_gone(100.5, 1.0));
}

}  // namespace
}  // namespace fastk::node::peer
