// AD-PSGD (policy ad_psgd, docs/protocol.md §4.5) on the one protocol: the pairwise averages
// conserve the sum of the models whatever the timing, reach the mean without gradients, and
// end when passive peers finish first; requests and replies nobody asked for are dropped;
// graphs and options it cannot run on are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::make_peers;
using testing::make_topology;
using topology::TopologyKind;

ProtocolConfig ad_psgd(std::int64_t iterations, double lr) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.policy.kind = PolicyKind::kAdPsgd;
  config.optimizer.lr = lr;
  config.seed = 7;
  return config;
}

// Peer i's gradient is always c_i = ((i + 1) / 2, -i / 4), wherever it is taken: the sum of
// the models then moves by exactly -lr * sum of the c_i of every step taken.
class ConstantGradients final : public GradientSource {
 public:
  static std::vector<float> of(PeerId i) {
    return {0.5f * static_cast<float>(i + 1), -0.25f * static_cast<float>(i)};
  }
  void begin(PeerId, const StartGradient&) override {}
  GradientResult collect(PeerId peer, std::int64_t) override { return {of(peer), {}}; }
  std::vector<double> losses(PeerId, const StartValidation& v) override {
    return std::vector<double>(v.models.size(), 0.0);
  }
};

struct Outcome {
  std::vector<double> sum{0.0, 0.0};
  std::vector<std::vector<float>> models;
  std::map<PeerId, int> averages;  // per peer: iterations whose update averaged
  bool finished = false;
};

// A ring of 8, peer 0 ten times slower than the rest and every compute time jittered, so
// requests meet gradients at every point; peer i starts at (i, 2 i).
Outcome run(double lr, std::int64_t iterations) {
  const auto topo = make_topology(TopologyKind::kRing, 8);
  std::vector<std::unique_ptr<PeerProtocol>> peers;
  for (int i = 0; i < 8; ++i) {
    peers.push_back(std::make_unique<PeerProtocol>(
        i, topo.schedule, ad_psgd(iterations, lr),
        make_params({static_cast<float>(i), static_cast<float>(2 * i)})));
  }
  testing::SlowPeerDelays delays(3);
  ConstantGradients gradients;
  VirtualNetwork net(std::move(peers), delays, gradients);
  Outcome r;
  net.on_record = [&](const IterationRecord& record) {
    if (!record.used.empty()) ++r.averages[record.peer];
  };
  net.start();
  net.run();
  r.finished = net.all_finished();
  for (int i = 0; i < 8; ++i) {
    const auto x = net.peer(i).model()->values();
    r.models.emplace_back(x.begin(), x.end());
    for (int c = 0; c < 2; ++c)
      r.sum[static_cast<std::size_t>(c)] += x[static_cast<std::size_t>(c)];
  }
  return r;
}

TEST(AdPsgd, PairwiseAveragesConserveTheSumOfTheModels) {
  constexpr std::int64_t kIterations = 200;
  constexpr double kLr = 0.125;
  const Outcome r = run(kLr, kIterations);
  ASSERT_TRUE(r.finished);
  // Initial sum (28, 56); every peer steps kIterations times by lr c_i.
  std::vector<double> expected{28.0, 56.0};
  for (int i = 0; i < 8; ++i) {
    for (int c = 0; c < 2; ++c) {
      expected[static_cast<std::size_t>(c)] -=
          kLr * kIterations * ConstantGradients::of(i)[static_cast<std::size_t>(c)];
    }
  }
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(r.sum[static_cast<std::size_t>(c)], expected[static_cast<std::size_t>(c)], 1e-2)
        << "value " << c;
  }
  // Every peer averaged, active (even) and passive (odd) alike; slow peer 0 the least, as
  // its neighbours finish long before it and then decline.
  for (int i = 0; i < 8; ++i) EXPECT_GT(r.averages.count(i) ? r.averages.at(i) : 0, 10) << i;
}

TEST(AdPsgd, WithoutGradientStepsThePeersReachTheMeanOfTheirModels) {
  const Outcome r = run(0.0, 300);
  ASSERT_TRUE(r.finished);
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(r.models[static_cast<std::size_t>(i)][0], 3.5, 1e-3) << i;
    EXPECT_NEAR(r.models[static_cast<std::size_t>(i)][1], 7.0, 1e-3) << i;
  }
}

// Peer 1 is passive on a ring of 4 (peer 0's side is active).
std::unique_ptr<PeerProtocol> ring4_peer(PeerId id, std::int64_t iterations) {
  const auto topo = make_topology(TopologyKind::kRing, 4);
  return std::make_unique<PeerProtocol>(id, topo.schedule, ad_psgd(iterations, 0.5),
                                        make_params({1.0f, 1.0f}));
}

template <typename A>
std::vector<A> actions_of(const Actions& actions) {
  std::vector<A> found;
  for (const auto& a : actions) {
    if (const A* x = std::get_if<A>(&a)) found.push_back(*x);
  }
  return found;
}

TEST(AdPsgd, APassivePeerAveragesAtOnceAndDeclinesOnceFinished) {
  auto peer = ring4_peer(1, 1);
  Actions out;
  peer->start(0, out);
  EXPECT_TRUE(actions_of<SendAveraging>(out).empty());  // passive peers ask nobody
  out.clear();
  peer->handle(0.1, AveragingArrived{0, 0, AveragingStep::kRequest, make_params({3.0f, -1.0f})},
               out);
  auto replies = actions_of<SendAveraging>(out);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].to, 0);
  EXPECT_EQ(replies[0].step, AveragingStep::kReply);
  EXPECT_EQ(replies[0].tag, 0);
  ASSERT_TRUE(replies[0].params);
  EXPECT_EQ(replies[0].params->values()[0], -1.0f);  // (1 - 3) / 2
  EXPECT_EQ(replies[0].params->values()[1], 1.0f);   // (1 + 1) / 2
  EXPECT_EQ(peer->model()->values()[0], 2.0f);       // the average, at once
  EXPECT_EQ(peer->model()->values()[1], 0.0f);
  out.clear();
  const std::vector<float> gradient{2.0f, 0.0f};
  peer->handle(0.2, GradientDone{as_vector(gradient), {}}, out);
  ASSERT_TRUE(peer->finished());
  EXPECT_EQ(peer->model()->values()[0], 1.0f);  // 2 - 0.5 * 2
  const auto record = actions_of<IterationCompleted>(out).at(0).record;
  EXPECT_EQ(record.used, std::vector<PeerId>{0});
  out.clear();
  peer->handle(0.3, AveragingArrived{2, 0, AveragingStep::kRequest, make_params({3.0f, -1.0f})},
               out);
  replies = actions_of<SendAveraging>(out);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_FALSE(replies[0].params);              // declined
  EXPECT_EQ(peer->model()->values()[0], 1.0f);  // the final model stays final
}

TEST(AdPsgd, AnActivePeerWaitsForTheReplyAndAddsItsHalf) {
  auto peer = ring4_peer(0, 5);
  Actions out;
  peer->start(0, out);
  auto requests = actions_of<SendAveraging>(out);
  ASSERT_EQ(requests.size(), 1u);
  const PeerId partner = requests[0].to;
  EXPECT_TRUE(partner == 1 || partner == 3);
  EXPECT_EQ(requests[0].step, AveragingStep::kRequest);
  out.clear();
  const std::vector<float> zero{0.0f, 0.0f};
  peer->handle(1.0, GradientDone{as_vector(zero), {}}, out);
  EXPECT_TRUE(actions_of<IterationCompleted>(out).empty());  // the reply is not here yet
  out.clear();
  peer->handle(1.1, AveragingArrived{partner, 0, AveragingStep::kReply, make_params({0.5f, -0.5f})},
               out);
  const auto done = actions_of<IterationCompleted>(out);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].record.used, std::vector<PeerId>{partner});
  EXPECT_EQ(peer->model()->values()[0], 1.5f);
  EXPECT_EQ(peer->model()->values()[1], 0.5f);
  // The same reply again, one from the other neighbour for a request not sent, and a request
  // to an active peer were not asked for.
  const PeerId other = partner == 1 ? 3 : 1;
  out.clear();
  peer->handle(1.2, AveragingArrived{partner, 0, AveragingStep::kReply, make_params({9.0f, 9.0f})},
               out);
  peer->handle(1.2, AveragingArrived{other, 3, AveragingStep::kReply, make_params({9.0f, 9.0f})},
               out);
  peer->handle(1.2, AveragingArrived{other, 1, AveragingStep::kRequest, make_params({9.0f, 9.0f})},
               out);
  EXPECT_EQ(peer->drops().count(DropCause::kNotAsked), 3);
  EXPECT_EQ(peer->model()->values()[0], 1.5f);
}

TEST(AdPsgd, APartnerThatLeavesIsNotWaitedForAndItsLateReplyStillCounts) {
  auto peer = ring4_peer(0, 5);
  Actions out;
  peer->start(0, out);
  const PeerId partner = actions_of<SendAveraging>(out).at(0).to;
  out.clear();
  const std::vector<float> zero{0.0f, 0.0f};
  peer->handle(1.0, GradientDone{as_vector(zero), {}}, out);
  peer->handle(1.5, NeighbourLeft{partner}, out);
  auto done = actions_of<IterationCompleted>(out);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].record.used.empty());
  // Iteration 1 asks the other neighbour (the one that left is not drawn).
  const auto requests = actions_of<SendAveraging>(out);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_NE(requests[0].to, partner);
  // The partner had averaged before it left: its half arrives late and is added.
  out.clear();
  peer->handle(1.6, AveragingArrived{partner, 0, AveragingStep::kReply, make_params({1.0f, 1.0f})},
               out);
  peer->handle(2.0, GradientDone{as_vector(zero), {}}, out);
  peer->handle(2.1, AveragingArrived{requests[0].to, 1, AveragingStep::kReply, nullptr},
               out);  // declined
  done = actions_of<IterationCompleted>(out);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].record.used, std::vector<PeerId>{partner});
  EXPECT_EQ(peer->model()->values()[0], 2.0f);
  EXPECT_EQ(peer->drops().total(), 0);
  // Its late reply did not bring back the peer that said BYE: iteration 2 asks the other.
  const auto next = actions_of<SendAveraging>(out);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].to, requests[0].to);
}

// A partner silent past the timeout is given up on, and not asked again while its request is
// open; when its reply finally comes, its half is added and it may be drawn again.
TEST(AdPsgd, ASilentPartnerIsNotAskedAgainUntilItAnswers) {
  const auto topo = make_topology(TopologyKind::kRing, 4);
  ProtocolConfig config = ad_psgd(20, 0.5);
  config.silence_timeout_s = 1.0;
  PeerProtocol peer(0, topo.schedule, config, make_params({1.0f, 1.0f}));
  Actions out;
  peer.start(0, out);
  const PeerId silent = actions_of<SendAveraging>(out).at(0).to;
  const PeerId other = silent == 1 ? 3 : 1;
  const std::vector<float> zero{0.0f, 0.0f};
  out.clear();
  peer.handle(0.5, GradientDone{as_vector(zero), {}}, out);
  peer.handle(1.5, TimerFired{}, out);  // silent for 1.5 s: given up
  ASSERT_EQ(actions_of<IterationCompleted>(out).size(), 1u);
  double t = 1.5;
  for (std::int64_t k = 1; k <= 4; ++k) {  // only the other is asked meanwhile
    const auto requests = actions_of<SendAveraging>(out);
    ASSERT_EQ(requests.size(), 1u) << k;
    EXPECT_EQ(requests[0].to, other) << k;
    out.clear();
    peer.handle(t += 0.1, GradientDone{as_vector(zero), {}}, out);
    peer.handle(t, AveragingArrived{other, k, AveragingStep::kReply, nullptr}, out);
  }
  peer.handle(t, AveragingArrived{silent, 0, AveragingStep::kReply, make_params({1.0f, 1.0f})},
              out);
  EXPECT_EQ(peer.drops().total(), 0);
  bool asked_again = false;
  for (std::int64_t k = 5; k < 20 && !asked_again; ++k) {
    const auto requests = actions_of<SendAveraging>(out);
    ASSERT_EQ(requests.size(), 1u) << k;
    asked_again = requests[0].to == silent;
    out.clear();
    peer.handle(t += 0.1, GradientDone{as_vector(zero), {}}, out);
    peer.handle(t, AveragingArrived{requests[0].to, k, AveragingStep::kReply, nullptr}, out);
  }
  EXPECT_TRUE(asked_again);
}

// A run that ends early (time budget, target, signal) stops every peer; the halves already
// applied by passive peers still reach their active partners, so the sum holds at the end too:
// without machine costs, and with them, when a reply may still be in its peer's I/O work.
void expect_sum_kept_when_stopped(const MachineCosts& costs) {
  constexpr double kLr = 0.125;
  const auto topo = make_topology(TopologyKind::kRing, 8);
  std::vector<std::unique_ptr<PeerProtocol>> peers;
  for (int i = 0; i < 8; ++i) {
    peers.push_back(std::make_unique<PeerProtocol>(
        i, topo.schedule, ad_psgd(1000, kLr),
        make_params({static_cast<float>(i), static_cast<float>(2 * i)})));
  }
  testing::SlowPeerDelays delays(5);
  ConstantGradients gradients;
  VirtualNetwork net(std::move(peers), delays, gradients, costs);
  std::vector<double> expected{28.0, 56.0};
  net.on_record = [&](const IterationRecord& r) {
    for (int c = 0; c < 2; ++c) {
      expected[static_cast<std::size_t>(c)] -=
          kLr * ConstantGradients::of(r.peer)[static_cast<std::size_t>(c)];
    }
  };
  net.start();
  int stopped_with_replies_pending = 0;
  for (double t = 20.013; t < 60; t += 3.7) {  // mid-iteration for everyone
    net.run_until(t);
    stopped_with_replies_pending += net.next_event_s() >= 0;
  }
  ASSERT_FALSE(net.all_finished());
  net.stop();
  std::vector<double> sum{0.0, 0.0};
  for (int i = 0; i < 8; ++i) {
    for (int c = 0; c < 2; ++c) {
      sum[static_cast<std::size_t>(c)] +=
          net.peer(i).model()->values()[static_cast<std::size_t>(c)];
    }
  }
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(sum[static_cast<std::size_t>(c)], expected[static_cast<std::size_t>(c)], 1e-2) << c;
  }
  EXPECT_GT(stopped_with_replies_pending, 0);
}

TEST(AdPsgd, StoppingMidRunKeepsTheSumOfTheModels) { expect_sum_kept_when_stopped({}); }

TEST(AdPsgd, StoppingMidRunKeepsTheSumWhileRepliesAreInTheirIoWork) {
  MachineCosts costs;
  costs.receive_s = 0.05;
  costs.send_s = 0.05;
  costs.update_per_term_s = 0.4;  // answering a request takes as long as 0.5 s of I/O work
  expect_sum_kept_when_stopped(costs);
}

// A stopped active peer adds the half it took before its update and the one that comes after;
// a stopped passive peer declines.
TEST(AdPsgd, AStoppedPeerAddsLateHalvesAndDeclinesRequests) {
  auto active = ring4_peer(0, 5);
  Actions out;
  active->start(0, out);
  const PeerId partner = actions_of<SendAveraging>(out).at(0).to;
  active->handle(
      0.1, AveragingArrived{partner, 0, AveragingStep::kReply, make_params({0.5f, 0.5f})}, out);
  active->stop();  // before its gradient was done: no step, but the half is added
  EXPECT_EQ(active->model()->values()[0], 1.5f);
  EXPECT_FALSE(active->finished());
  auto passive = ring4_peer(1, 5);
  out.clear();
  passive->start(0, out);
  passive->stop();
  passive->handle(0.2, AveragingArrived{0, 0, AveragingStep::kRequest, make_params({3.0f, 3.0f})},
                  out);
  const auto replies = actions_of<SendAveraging>(out);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_FALSE(replies[0].params);
  EXPECT_EQ(passive->model()->values()[0], 1.0f);
}

TEST(AdPsgd, RefusesAGraphWithAnOddCycleNamingTwoNeighboursOnOneSide) {
  const auto topo = make_topology(TopologyKind::kRing, 7);
  try {
    PeerProtocol peer(0, topo.schedule, ad_psgd(10, 0.1), make_params({0.0f}));
    FAIL() << "a ring of 7 is not bipartite";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bipartite"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("are neighbours on the same side"), std::string::npos);
  }
  const auto exponential = make_topology(TopologyKind::kOnePeerExponential, 8);
  EXPECT_THROW(PeerProtocol(0, exponential.schedule, ad_psgd(10, 0.1), make_params({0.0f})),
               std::invalid_argument);
}

TEST(AdPsgd, RefusesTheOptionsItHasNoUseForByName) {
  const auto topo = make_topology(TopologyKind::kRing, 8);
  const auto refused = [&](ProtocolConfig config, const std::string& option) {
    try {
      PeerProtocol peer(0, topo.schedule, config, make_params({0.0f}));
      ADD_FAILURE() << option << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  };
  ProtocolConfig c = ad_psgd(10, 0.1);
  c.push_sum = true;
  refused(c, "push_sum");
  c = ad_psgd(10, 0.1);
  c.keep_connected = true;
  refused(c, "keep_connected");
  c = ad_psgd(10, 0.1);
  c.max_gap = 2;
  refused(c, "max_gap");
  c = ad_psgd(10, 0.1);
  c.order = UpdateOrder::kAdaptThenCombine;
  refused(c, "order");
  auto peer = ring4_peer(1, 10);
  Actions out;
  EXPECT_THROW(peer->join(0, out), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::consensus
