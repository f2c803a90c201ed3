// The cyclic share schemes ([coding] scheme = "crc" or "cyclic_mds", docs/coding.md §7.7): a
// peer's neighbours form one cyclic block, each holds a window of s+1 (crc) or s+m
// (cyclic_mds) of their partitions, any all-but-s of them cover it, and the decoder's
// mixed-sign coefficients give the neighbourhood's mean when members agree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "consensus/peer_protocol.h"
#include "tests/support/coded_neighbourhoods.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

constexpr int kDim = 5;

std::vector<float> initial_model() { return testing::spread_model(kDim); }

ProtocolConfig cyclic_config(coding::Scheme scheme, std::int64_t iterations, int stragglers,
                             int sub_blocks = 1) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = 0.1;
  config.coding.scheme = scheme;
  config.coding.stragglers = stragglers;
  config.coding.sub_blocks = sub_blocks;
  return config;
}

struct Case {
  coding::Scheme scheme;
  TopologyKind kind;
  int peers, stragglers, sub_blocks;
};

std::string describe(const Case& c) {
  return coding::to_string(c.scheme) + " on " + to_string(c.kind) +
         " s=" + std::to_string(c.stragglers) + " m=" + std::to_string(c.sub_blocks);
}

// Equal speeds, identical models: one step must be x(0) - lr * (mean of N[p]'s partition
// gradients), decoded from shares whose coefficients cancel, for windows of 2 to 4.
TEST(CyclicCodedProtocol, DecodedGradientIsTheNeighbourhoodMean) {
  using coding::Scheme;
  for (const Case& c : {Case{Scheme::kCyclicRepetition, TopologyKind::kTorus, 16, 1, 1},
                        Case{Scheme::kCyclicRepetition, TopologyKind::kTorus, 16, 2, 1},
                        Case{Scheme::kCyclicRepetition, TopologyKind::kHypercube, 8, 1, 1},
                        Case{Scheme::kCyclicMds, TopologyKind::kTorus, 16, 1, 1},
                        Case{Scheme::kCyclicMds, TopologyKind::kTorus, 16, 1, 2},
                        Case{Scheme::kCyclicMds, TopologyKind::kTorus, 16, 2, 2},
                        Case{Scheme::kCyclicMds, TopologyKind::kHypercube, 8, 1, 2},
                        // Blocks of 2, 3 and 4: a peer's own block and its neighbours' differ.
                        Case{Scheme::kCyclicRepetition, TopologyKind::kGrid, 16, 1, 1},
                        Case{Scheme::kCyclicMds, TopologyKind::kGrid, 16, 1, 1}}) {
    testing::expect_one_step_with_the_neighbourhood_mean(
        testing::make_topology(c.kind, c.peers),
        cyclic_config(c.scheme, 1, c.stragglers, c.sub_blocks), kDim, 1e-6, describe(c));
  }
}

// Peer 0 of a 4x4 torus (neighbours 1, 3, 4, 12). In neighbour 1's block {0, 2, 5, 13} it is
// member 0 and holds the window {0, 2} under crc s = 1, {0, 2, 5} under cyclic_mds s = 1,
// m = 2; in 12's block {0, 8, 13, 15} likewise {0, 8} and {0, 8, 13}. crc shares are whole
// gradients, cyclic_mds ones ceil(5/2) = 3 floats.
TEST(CyclicCodedProtocol, EachNeighbourGetsTheShareOfItsWindow) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  struct Expected {
    coding::Scheme scheme;
    int sub_blocks;
    std::map<PeerId, std::vector<PeerId>> windows;
    std::size_t floats;
  };
  for (const Expected& e :
       {Expected{coding::Scheme::kCyclicRepetition, 1, {{1, {0, 2}}, {12, {0, 8}}}, kDim},
        Expected{coding::Scheme::kCyclicMds, 2, {{1, {0, 2, 5}}, {12, {0, 8, 13}}}, 3}}) {
    PeerProtocol peer(0, topo.schedule, cyclic_config(e.scheme, 2, 1, e.sub_blocks),
                      make_params(initial_model()));
    Actions out;
    const std::vector<PeerId> partitions = testing::start_and_list_partitions(peer, out);
    ASSERT_FALSE(partitions.empty());
    std::vector<float> gradients(partitions.size() * kDim, 1.0f);
    peer.handle(1.0, GradientDone{as_vector(gradients), {}}, out);
    int shares = 0;
    for (const Action& a : out) {
      const auto* s = std::get_if<SendCoded>(&a);
      if (s == nullptr) continue;
      ++shares;
      EXPECT_EQ(s->coded->gradient->values().size(), e.floats);
      if (e.windows.count(s->to) > 0) {
        EXPECT_EQ(s->coded->covers, e.windows.at(s->to)) << s->to;
      }
      for (PeerId r : s->coded->covers) {
        EXPECT_TRUE(std::binary_search(partitions.begin(), partitions.end(), r) || r == 0)
            << "sends a share of partition " << r << " it did not compute";
      }
    }
    EXPECT_EQ(shares, 4);
  }
}

// Peer 5 of the torus has the block {1, 4, 6, 9}; under crc s = 1, member 1 (peer 4) holds
// {4, 6}. A share from 4 naming another window, the whole block, its window permuted or with a
// repeated id is not in the code; the same share from 0, no neighbour, is dropped as such; the
// right window at the wrong length is the wrong size; the right one is kept.
TEST(CyclicCodedProtocol, ASharesWindowMustBeItsSenders) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  PeerProtocol peer(5, topo.schedule, cyclic_config(coding::Scheme::kCyclicRepetition, 2, 1),
                    make_params(initial_model()));
  Actions out;
  peer.start(0, out);
  peer.handle(0.5, CodedGradientArrived{4, 0, testing::coded_share({1, 4}, kDim)}, out);
  peer.handle(0.5, CodedGradientArrived{4, 0, testing::coded_share({1, 4, 6, 9}, kDim)}, out);
  peer.handle(0.5, CodedGradientArrived{4, 0, testing::coded_share({6, 4}, kDim)}, out);
  peer.handle(0.5, CodedGradientArrived{4, 0, testing::coded_share({4, 4, 6}, kDim)}, out);
  EXPECT_EQ(peer.drops().count(DropCause::kNotInTheCode), 4);
  peer.handle(0.5, CodedGradientArrived{0, 0, testing::coded_share({4, 6}, kDim)}, out);
  EXPECT_EQ(peer.drops().count(DropCause::kNotNeighbour), 1);
  peer.handle(0.5, CodedGradientArrived{4, 0, testing::coded_share({4, 6}, 3)}, out);
  EXPECT_EQ(peer.drops().count(DropCause::kWrongSize), 1);
  peer.handle(0.5, CodedGradientArrived{4, 0, testing::coded_share({4, 6}, kDim)}, out);
  EXPECT_EQ(peer.dropped_messages(), 6) << "the fitting share is kept";
}

// s slow neighbours of peer 5's block {1, 4, 6, 9} are not awaited, two different sets for
// each scheme and s: the other 4 - s cover it, and every step decodes exactly.
TEST(CyclicCodedProtocol, AnySSlowNeighboursAreNotAwaited) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  struct Slow {
    coding::Scheme scheme;
    int stragglers, sub_blocks;
    std::vector<PeerId> slow;
  };
  for (const Slow& c :
       {Slow{coding::Scheme::kCyclicRepetition, 1, 1, {6}},
        Slow{coding::Scheme::kCyclicRepetition, 1, 1, {1}},
        Slow{coding::Scheme::kCyclicRepetition, 2, 1, {1, 9}},
        Slow{coding::Scheme::kCyclicRepetition, 2, 1, {4, 6}},
        Slow{coding::Scheme::kCyclicMds, 1, 2, {4}}, Slow{coding::Scheme::kCyclicMds, 1, 2, {9}},
        Slow{coding::Scheme::kCyclicMds, 2, 2, {4, 6}},
        Slow{coding::Scheme::kCyclicMds, 2, 2, {1, 9}}}) {
    LambdaDelays delays;
    delays.compute = [&](PeerId i, std::int64_t) {
      return std::count(c.slow.begin(), c.slow.end(), i) > 0 ? 20.0 : 1.0;
    };
    LeastSquares model(kDim, 200, 2, 16);
    VirtualNetwork net(
        testing::make_peers(topo.schedule, cyclic_config(c.scheme, 10, c.stragglers, c.sub_blocks),
                            initial_model()),
        delays, model);
    int checked = 0;
    net.on_record = [&](const IterationRecord& r) {
      if (r.peer != 5) return;
      ++checked;
      EXPECT_TRUE(r.decodable) << coding::to_string(c.scheme) << " k=" << r.iteration;
      EXPECT_LT(r.wait_s(), 1.0) << coding::to_string(c.scheme) << " s=" << c.stragglers
                                 << " k=" << r.iteration;
    };
    net.start();
    net.run();
    EXPECT_TRUE(net.all_finished());
    EXPECT_EQ(checked, 10);
  }
}

// A neighbourhood too small for the window is refused by name: a ring's peers have 2
// neighbours, and cyclic_mds with s = 1, m = 2 needs each to hold 3.
TEST(CyclicCodedProtocol, ANeighbourhoodSmallerThanTheWindowIsRefused) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  try {
    PeerProtocol peer(0, topo.schedule, cyclic_config(coding::Scheme::kCyclicMds, 2, 1, 2),
                      make_params(initial_model()));
    FAIL() << "a window of 3 in a block of 2 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("peer 0 has 2 neighbours"));
  }
}

}  // namespace
}  // namespace fastk::consensus
