// The communication-efficient scheme ([coding] scheme = "mds", docs/coding.md §7.6): shares of
// 1/m of a gradient, any m members of a block cover it, the decoded gradient is the
// neighbourhood's mean when members agree, and with links of a limited rate
// (simulation/shaped_links.h) its shorter messages make iterations shorter than FRC's.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>

#include "coding/grouped_mds_code.h"
#include "consensus/peer_protocol.h"
#include "simulation/shaped_links.h"
#include "tests/support/coded_neighbourhoods.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using simulation::ShapedLinks;

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

constexpr int kDim = 5;

std::vector<float> initial_model(int dim = kDim) { return testing::spread_model(dim); }

ProtocolConfig mds_config(std::int64_t iterations, int stragglers, int sub_blocks) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = 0.1;
  config.coding.scheme = coding::Scheme::kMds;
  config.coding.stragglers = stragglers;
  config.coding.sub_blocks = sub_blocks;
  return config;
}

// Equal speeds, identical models: every share is evaluated at x(0), so one step must equal
// x(0) - lr * (mean of N[p]'s partition gradients), whatever the blocks look like: blocks of 4
// on the torus (any 2 of 4), of 3 plus a block of 1 (s = 1, m = 2 on degree 4), and the ring's
// single block of 2 with s = 0.
TEST(MdsCodedProtocol, DecodedGradientIsTheNeighbourhoodMean) {
  struct Case {
    TopologyKind kind;
    int peers, stragglers, sub_blocks;
  };
  for (const Case& c : {Case{TopologyKind::kTorus, 16, 2, 2}, Case{TopologyKind::kTorus, 16, 1, 2},
                        Case{TopologyKind::kRing, 8, 0, 2}, Case{TopologyKind::kTorus, 16, 1, 3}}) {
    testing::expect_one_step_with_the_neighbourhood_mean(
        testing::make_topology(c.kind, c.peers), mds_config(1, c.stragglers, c.sub_blocks), kDim,
        1e-8,
        to_string(c.kind) + " s=" + std::to_string(c.stragglers) +
            " m=" + std::to_string(c.sub_blocks));
  }
}

// Peer 0 of a 4x4 torus (neighbours 1, 3, 4, 12), s = 2, m = 2: it is in the one block of
// each neighbour's neighbourhood and sends each a share of ceil(5/2) = 3 floats, next to its
// model; neighbours need 2 of their block's 4 shares.
TEST(MdsCodedProtocol, SharesAreOneMthOfAGradient) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  PeerProtocol peer(0, topo.schedule, mds_config(2, 2, 2), make_params(initial_model()));
  Actions out;
  const std::vector<PeerId> partitions = testing::start_and_list_partitions(peer, out);
  ASSERT_FALSE(partitions.empty());
  EXPECT_EQ(partitions.front(), 0);
  std::vector<float> gradients(partitions.size() * kDim, 1.0f);
  peer.handle(1.0, GradientDone{as_vector(gradients), {}}, out);
  std::map<PeerId, std::size_t> share_size;
  for (const Action& a : out) {
    if (const auto* s = std::get_if<SendCoded>(&a)) {
      share_size[s->to] = s->coded->gradient->values().size();
      EXPECT_EQ(s->coded->covers.size(), 4u) << "the block of " << s->to;
      EXPECT_TRUE(std::binary_search(s->coded->covers.begin(), s->coded->covers.end(), 0));
    }
  }
  EXPECT_EQ(share_size, (std::map<PeerId, std::size_t>{{1, 3}, {3, 3}, {4, 3}, {12, 3}}));
}

CodedPart share(std::vector<PeerId> covers, std::size_t floats) {
  return testing::coded_share(std::move(covers), floats);
}

// Peer 5 of a 4x4 torus with s = 0, m = 2 has blocks {1, 4} and {6, 9}; shares are 3 floats.
// A whole gradient, a set of ids that is no block, and a share from 6 naming the block it is
// not in are dropped, each for its cause; under mds a share is decoded by its sender's place.
TEST(MdsCodedProtocol, MalformedSharesAreDroppedByCause) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  PeerProtocol peer(5, topo.schedule, mds_config(2, 0, 2), make_params(initial_model()));
  Actions out;
  peer.start(0, out);
  peer.handle(0.5, CodedGradientArrived{1, 0, share({1, 4}, kDim)}, out);
  EXPECT_EQ(peer.drops().count(DropCause::kWrongSize), 1);
  peer.handle(0.5, CodedGradientArrived{1, 0, share({1, 4, 6}, 3)}, out);
  peer.handle(0.5, CodedGradientArrived{6, 0, share({1, 4}, 3)}, out);
  EXPECT_EQ(peer.drops().count(DropCause::kNotInTheCode), 2);
  peer.handle(0.5, CodedGradientArrived{1, 0, share({1, 4}, 3)}, out);
  peer.handle(0.5, CodedGradientArrived{6, 0, share({6, 9}, 3)}, out);
  EXPECT_EQ(peer.dropped_messages(), 3) << "the two fitting shares are kept";
}

// Peer 0 of a hypercube of 8 has one block {1, 2, 4}; with s = 1, m = 2 two shares cover it.
// 1 and 2 leave before their first share, and 4 is 20x slow: one member cannot cover the
// block, so peer 0 does not wait for it and steps with its own gradient, the block dropped.
TEST(MdsCodedProtocol, TooFewMembersLeftToCoverABlockAreNotAwaited) {
  topology::TopologySpec spec;
  spec.kind = TopologyKind::kHypercube;
  spec.peers = 8;
  const auto topo = topology::build_topology(spec);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 4 ? 20.0 : 1.0; };
  LeastSquares model(kDim, 200, 2, 8);
  VirtualNetwork net(testing::make_peers(topo.schedule, mds_config(3, 1, 2), initial_model()),
                     delays, model);
  std::vector<IterationRecord> records;
  net.on_record = [&](const IterationRecord& r) {
    if (r.peer == 0) records.push_back(r);
  };
  net.start();
  net.run_until(0.5);
  net.remove_peer(1, 0.5);
  net.remove_peer(2, 0.5);
  net.run();
  ASSERT_FALSE(records.empty());
  EXPECT_FALSE(records[0].decodable);
  EXPECT_LT(records[0].update_s, 2.0) << "waited for peer 4's share, which cannot cover {1,2,4}";
  EXPECT_EQ(records[0].coded_members, 1);
  EXPECT_DOUBLE_EQ(records[0].decode_residual, 1.0);
}

// Peer 5 of the torus (block {1, 4, 6, 9}, s = 2, m = 2) with 1, 4 and 6 slow: at the
// deadline it has one share, not enough, and steps with its own gradient alone, rescaled by
// the one partition it covers: x(1) = x(0) - lr g_5.
TEST(MdsCodedProtocol, AtTheDeadlineAnUncoveredBlockIsDroppedAndTheMeanRescaled) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  ProtocolConfig config = mds_config(1, 2, 2);
  config.coding.deadline_s = 0.5;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 1 || i == 4 || i == 6 ? 20.0 : 1.0; };
  LeastSquares model(kDim, 200, 2, 16);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model()), delays, model);
  std::optional<IterationRecord> first;
  net.on_record = [&](const IterationRecord& r) {
    if (r.peer == 5 && !first) first = r;
  };
  net.start();
  net.run();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->decodable);
  EXPECT_NEAR(first->update_s, 1.5, 1e-9) << "own gradient at 1.0, deadline 0.5 later";
  const std::vector<float> x0 = initial_model();
  const auto g = model.gradient(x0, model.batch_rows(5, 0));
  // Every model is still x(0), so mixing 9's leaves it; the step is the own gradient's.
  const auto x1 = net.peer(5).model()->values();
  for (int v = 0; v < kDim; ++v) {
    const auto i = static_cast<std::size_t>(v);
    EXPECT_NEAR(x1[i], x0[i] - 0.1 * g[i], 1e-5) << v;
  }
}

// Peer 5's block {1, 4, 6, 9} (s = 2, m = 2): shares from 1 and 4 for iteration 0 and one
// from 6 for iteration 1 (6 is ahead). The block is decoded from the two of iteration 0 alone:
// mixing in 6's share, whatever it holds, would not give the block's sum.
TEST(MdsCodedProtocol, ABlockIsDecodedFromSharesOfOneIteration) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  PeerProtocol peer(5, topo.schedule, mds_config(3, 2, 2), make_params(initial_model()));
  Actions out;
  peer.start(0, out);
  std::size_t partitions = 0;
  for (const Action& a : out) {
    if (const auto* start = std::get_if<StartGradient>(&a)) partitions = start->partitions.size();
  }
  ASSERT_GT(partitions, 0u);
  const coding::GroupedMdsCode code(4, 2, 2);  // what every peer builds for a block of 4
  const Eigen::VectorXf block_sum = Eigen::VectorXf::LinSpaced(kDim, 1.0f, 2.0f);
  const std::vector<Eigen::VectorXf> partials = {block_sum, Eigen::VectorXf::Zero(kDim),
                                                 Eigen::VectorXf::Zero(kDim),
                                                 Eigen::VectorXf::Zero(kDim)};
  auto share_of = [&](int position) {
    const Eigen::VectorXf y = code.encode(position, partials);
    auto c = std::make_shared<CodedGradient>();
    c->covers = {1, 4, 6, 9};
    c->gradient = make_params(std::vector<float>(y.data(), y.data() + y.size()));
    return CodedPart(c);
  };
  peer.handle(0.1, CodedGradientArrived{1, 0, share_of(0)}, out);
  peer.handle(0.1, CodedGradientArrived{4, 0, share_of(1)}, out);
  auto ahead = std::make_shared<CodedGradient>();
  ahead->covers = {1, 4, 6, 9};
  ahead->gradient = make_params(std::vector<float>(3, 100.0f));
  peer.handle(0.1, CodedGradientArrived{6, 1, ahead}, out);
  ASSERT_EQ(peer.dropped_messages(), 0);
  std::vector<float> gradients(partitions * kDim, 0.0f);
  for (int v = 0; v < kDim; ++v) gradients[static_cast<std::size_t>(v)] = 0.5f;  // own: g_5
  out.clear();
  peer.handle(1.0, GradientDone{as_vector(gradients), {}}, out);
  ASSERT_EQ(peer.iteration(), 1) << "covered by the two shares of iteration 0";
  const std::vector<float> x0 = initial_model();
  const auto x1 = peer.model()->values();
  for (int v = 0; v < kDim; ++v) {
    const auto i = static_cast<std::size_t>(v);
    EXPECT_NEAR(x1[i], x0[i] - 0.1 * (0.5 + block_sum(v)) / 5.0, 1e-5) << v;
  }
}

// Peers 1 and 4, both in peer 5's one block {1, 4, 6, 9}, are 20 times slower: 6 and 9
// cover it, so peer 5 never waits for them.
TEST(MdsCodedProtocol, AnyTwoSlowMembersOfABlockAreNotAwaited) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 1 || i == 4 ? 20.0 : 1.0; };
  LeastSquares model(kDim, 200, 2, 16);
  VirtualNetwork net(testing::make_peers(topo.schedule, mds_config(10, 2, 2), initial_model()),
                     delays, model);
  int checked = 0;
  net.on_record = [&](const IterationRecord& r) {
    if (r.peer != 5) return;
    ++checked;
    EXPECT_TRUE(r.decodable) << "k=" << r.iteration;
    EXPECT_LT(r.wait_s(), 1.0) << "k=" << r.iteration;
  };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  EXPECT_EQ(checked, 10);
}

// Mean time per iteration of a 16-peer torus run under the given code, on links of `rate`
// bytes/s (0: free), with a model of `dim` floats.
double mean_iteration_s(coding::Scheme scheme, int stragglers, double rate, int dim) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  ProtocolConfig config = mds_config(8, stragglers, 2);
  config.coding.scheme = scheme;
  LambdaDelays delays;
  delays.link = [](PeerId, PeerId, std::int64_t) { return 0.0; };
  LeastSquares model(dim, 200, 2, 16);
  MachineCosts costs;
  costs.link_bytes_per_s = rate;
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model(dim)), delays, model,
                     costs);
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  return net.now_s() / 8.0;
}

// Links the bottleneck: 4 neighbours x (model + share) per iteration. FRC s = 1 sends a
// model and a whole gradient to each (8 vectors at 0.25 s), mds s = 2, m = 2 a model and half
// a gradient (6), both after a 1 s gradient: about 1 + 2 = 3 s against 1 + 1.5 = 2.5 s
// (measured 2.95 and 2.39). With free links both take the compute time.
TEST(MdsCodedProtocol, ShorterSharesShortenIterationsOnSlowLinks) {
  const int dim = 2000;            // 8 kB vectors: the 64-byte header allowance hardly counts
  const double rate = 8000.0 * 4;  // a vector per 0.25 s; compute takes 1 s
  const double frc = mean_iteration_s(coding::Scheme::kFrc, 1, rate, dim);
  const double mds = mean_iteration_s(coding::Scheme::kMds, 2, rate, dim);
  EXPECT_GT(frc, 1.5) << "8 vectors at 0.25 s each bound FRC's iteration";
  EXPECT_NEAR(mds / frc, 2.5 / 3.0, 0.04) << "frc " << frc << " s, mds " << mds << " s";
  EXPECT_NEAR(mean_iteration_s(coding::Scheme::kFrc, 1, 0, dim), 1.0, 1e-9);
  EXPECT_NEAR(mean_iteration_s(coding::Scheme::kMds, 2, 0, dim), 1.0, 1e-9);
}

// The link model on its own: a sender's messages queue on its uplink in the order sent, a
// receiver's downlink takes each in the first free stretch after its sender began sending
// it, and the link's delay comes after the bytes are in.
TEST(ShapedLinks, MessagesQueueOnBothEndsOfAPeersLink) {
  ShapedLinks links(3, 1000.0);                                 // 1000 bytes/s
  EXPECT_DOUBLE_EQ(links.arrival_s(0, 1, 0.0, 500, 0.1), 0.6);  // 0.5 s on the links, 0.1 delay
  EXPECT_DOUBLE_EQ(links.arrival_s(0, 2, 0.0, 500, 0.1), 1.1);  // behind it on 0's uplink
  // 2 sends from 0.2 to 0.7; 1's downlink is busy until 0.5, so it takes these bytes from 0.5.
  EXPECT_DOUBLE_EQ(links.arrival_s(2, 1, 0.2, 500, 0.0), 1.0);
  // The link's delay holds a message after its bytes are in: it does not keep the receiver's
  // link busy. 0's message to 1 is in at 0.5 (then held 1 s); 2's, sent at 0, follows at once.
  ShapedLinks delayed(3, 1000.0);
  EXPECT_DOUBLE_EQ(delayed.arrival_s(0, 1, 0.0, 500, 1.0), 1.5);
  EXPECT_DOUBLE_EQ(delayed.arrival_s(2, 1, 0.0, 500, 0.0), 1.0);
  ShapedLinks free_links(3, 0.0);
  EXPECT_DOUBLE_EQ(free_links.arrival_s(0, 1, 2.0, 1 << 30, 0.25), 2.25);
  EXPECT_THROW(ShapedLinks(2, -1.0), std::invalid_argument);
}

// Peer 0 has four messages queued on its uplink, the last for peer 2 (0.5 s each at this
// rate); peer 1's one message to 2 goes through while 0's are still queued.
TEST(ShapedLinks, ABackloggedSenderDoesNotHoldUpAnotherOnTheSameReceiver) {
  ShapedLinks links(3, 1000.0);
  for (int i = 0; i < 3; ++i) links.arrival_s(0, 1, 0.0, 500, 0.0);
  EXPECT_DOUBLE_EQ(links.arrival_s(0, 2, 0.0, 500, 0.0), 2.0);
  EXPECT_DOUBLE_EQ(links.arrival_s(1, 2, 0.01, 500, 0.0), 0.51);
  // A message that does not fit before 0's stretch [1.5, 2.0) on 2's downlink goes after it.
  EXPECT_DOUBLE_EQ(links.arrival_s(1, 2, 0.6, 1000, 0.0), 3.0);
}

}  // namespace
}  // namespace fastk::consensus
