// The protocol's coded-neighbourhood mode ([coding] scheme frc): what a peer computes and
// sends, when it steps, with which gradient, and what it refuses. Expected values come from
// the toy least-squares gradients, combined by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

constexpr int kDim = 3;

std::vector<float> initial_model() { return {0.3f, -0.2f, 0.5f}; }

ProtocolConfig frc_config(std::int64_t iterations) {
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = 0.1;
  config.coding.scheme = coding::Scheme::kFrc;
  config.coding.stragglers = 1;
  return config;
}

// sum over `rows_of` partitions of the toy gradient at x, each over batch_rows(r, k).
std::vector<double> partition_sum(const LeastSquares& model, const std::vector<float>& x,
                                  const std::vector<PeerId>& partitions, std::int64_t k) {
  std::vector<double> sum(kDim, 0.0);
  for (PeerId r : partitions) {
    const auto g = model.gradient(x, model.batch_rows(r, k));
    for (int c = 0; c < kDim; ++c)
      sum[static_cast<std::size_t>(c)] += g[static_cast<std::size_t>(c)];
  }
  return sum;
}

template <typename T>
std::vector<const T*> all_of_type(const Actions& actions) {
  std::vector<const T*> found;
  for (const Action& a : actions) {
    if (const T* t = std::get_if<T>(&a)) found.push_back(t);
  }
  return found;
}

std::vector<float> flat(const std::vector<std::vector<double>>& parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

CodedPart coded(std::vector<PeerId> covers, std::vector<float> gradient, double compute_s = 1.0) {
  auto c = std::make_shared<CodedGradient>();
  c->covers = std::move(covers);
  c->compute_s = compute_s;
  c->gradient = make_params(std::move(gradient));
  return c;
}

// Peer 0 of a ring of 8 with s = 1, started: it computes partitions 0, 2, 6 (see below).
std::unique_ptr<PeerProtocol> started_ring_peer0(std::int64_t iterations, Actions& out) {
  static const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  auto peer = std::make_unique<PeerProtocol>(0, topo.schedule, frc_config(iterations),
                                             make_params(initial_model()));
  peer->start(0, out);
  return peer;
}

// Its three partition gradients, any values.
const std::vector<float> kThreePartitions = {1, 1, 1, 2, 2, 2, 3, 3, 3};

// Equal speeds, identical starting models: every coded gradient is evaluated at x(0), so the
// decoded gradient is exactly the mean of N[p]'s partition gradients (docs/coding.md, property 22).
TEST(CodedProtocol, DecodedGradientIsTheNeighbourhoodMean) {
  for (const auto& [kind, peers] :
       {std::pair{TopologyKind::kRing, 8}, std::pair{TopologyKind::kTorus, 16}}) {
    const auto topo = testing::make_topology(kind, peers);
    LambdaDelays delays;
    LeastSquares model(kDim, 200, 2, peers);
    VirtualNetwork net(testing::make_peers(topo.schedule, frc_config(1), initial_model()), delays,
                       model);
    std::vector<IterationRecord> records;
    net.on_record = [&](const IterationRecord& r) { records.push_back(r); };
    net.start();
    net.run();
    ASSERT_TRUE(net.all_finished());
    ASSERT_EQ(records.size(), static_cast<std::size_t>(peers));
    const std::vector<float> x0 = initial_model();
    for (PeerId p = 0; p < peers; ++p) {
      std::vector<PeerId> members = {p};
      for (PeerId q : topo.graph.neighbors(p)) members.push_back(q);
      const auto sum = partition_sum(model, x0, members, 0);
      const auto x1 = net.peer(p).model()->values();
      for (int c = 0; c < kDim; ++c) {
        const double expected =
            x0[static_cast<std::size_t>(c)] -
            0.1 * sum[static_cast<std::size_t>(c)] / static_cast<double>(members.size());
        EXPECT_NEAR(x1[static_cast<std::size_t>(c)], expected, 1e-5)
            << to_string(topo.spec.kind) << " peer " << p << " coordinate " << c;
      }
    }
    for (const auto& r : records) {
      EXPECT_TRUE(r.decodable) << r.peer;
      EXPECT_LT(r.decode_residual, 1e-9);
    }
  }
}

// Peer 0 of a ring of 8 with s = 1: N[1]'s blocks are {1}, {0,2}; N[7]'s are {7}, {0,6}. It
// computes partitions 0, 2, 6 and sends the model, then g0+g2 to 1 and g0+g6 to 7.
TEST(CodedProtocol, EncoderSendsEachNeighbourItsBlockSum) {
  Actions out;
  auto peer = started_ring_peer0(3, out);
  const auto starts = all_of_type<StartGradient>(out);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0]->partitions, (std::vector<PeerId>{0, 2, 6}));
  EXPECT_TRUE(all_of_type<SendParams>(out).empty()) << "the model goes out with the gradients";

  out.clear();
  peer->handle(1.0, GradientDone{as_vector(flat({{1, 2, 3}, {10, 20, 30}, {100, 200, 300}})), {}},
               out);
  const auto sends = all_of_type<SendParams>(out);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0]->tag, 0);
  const auto codeds = all_of_type<SendCoded>(out);
  ASSERT_EQ(codeds.size(), 2u);
  std::map<PeerId, const SendCoded*> by_receiver;
  for (const auto* c : codeds) by_receiver[c->to] = c;
  ASSERT_TRUE(by_receiver.count(1) && by_receiver.count(7));
  EXPECT_EQ(by_receiver[1]->coded->covers, (std::vector<PeerId>{0, 2}));
  EXPECT_EQ(by_receiver[7]->coded->covers, (std::vector<PeerId>{0, 6}));
  const auto to1 = by_receiver[1]->coded->gradient->values();
  const auto to7 = by_receiver[7]->coded->gradient->values();
  EXPECT_EQ(std::vector<float>(to1.begin(), to1.end()), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(std::vector<float>(to7.begin(), to7.end()), (std::vector<float>{101, 202, 303}));
  EXPECT_DOUBLE_EQ(by_receiver[1]->coded->compute_s, 1.0);
  EXPECT_TRUE(all_of_type<IterationCompleted>(out).empty()) << "block {1,7} is not covered yet";
}

// Ring of 8, peer 3 twenty times slower: its neighbours 2 and 4 get block {1,3} / {3,5}
// from peers 1 / 5 and never wait for it.
TEST(CodedProtocol, PersistentlySlowNeighbourIsNeverAwaited) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 3 ? 20.0 : 1.0; };
  LeastSquares model(kDim, 200, 2, 8);
  VirtualNetwork net(testing::make_peers(topo.schedule, frc_config(10), initial_model()), delays,
                     model);
  int checked = 0;
  net.on_record = [&](const IterationRecord& r) {
    if (r.peer != 2 && r.peer != 4) return;
    ++checked;
    EXPECT_TRUE(r.decodable) << r.peer << " k=" << r.iteration;
    EXPECT_LT(r.wait_s(), 1.0) << r.peer << " k=" << r.iteration;
    if (r.iteration == 0) {
      // Own gradient at 1.0, the other block member's coded gradient 0.1 later; peer 3's
      // first gradient is only done at 20.
      EXPECT_NEAR(r.update_s, 1.1, 1e-9) << r.peer;
    }
  };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  EXPECT_EQ(checked, 20);
}

// Both members of block {1,3} of N[2] are slow: with deadline_s the peer steps without the
// block, rescaled by the one partition it has (or by n_p = 3 without rescale). No neighbour
// model has arrived by then (models go out with the coded gradients), so x(1) = x(0) - lr g.
TEST(CodedProtocol, MissingBlockStepsAtTheDeadlineRescaled) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 8);
  for (bool rescale : {true, false}) {
    ProtocolConfig config = frc_config(1);
    config.coding.deadline_s = 0.5;
    config.coding.rescale = rescale;
    LambdaDelays delays;
    delays.compute = [](PeerId i, std::int64_t) { return i == 1 || i == 3 ? 10.0 : 1.0; };
    LeastSquares model(kDim, 200, 2, 8);
    VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model()), delays, model);
    IterationRecord peer2;
    net.on_record = [&](const IterationRecord& r) {
      if (r.peer == 2) peer2 = r;
    };
    net.start();
    net.run();
    ASSERT_TRUE(net.all_finished());
    EXPECT_FALSE(peer2.decodable);
    EXPECT_NEAR(peer2.update_s, 1.5, 1e-9);
    EXPECT_EQ(peer2.coded_members, 1);
    EXPECT_TRUE(peer2.used.empty());
    const std::vector<float> x0 = initial_model();
    const auto g2 = partition_sum(model, x0, {2}, 0);
    const double divisor = rescale ? 1.0 : 3.0;
    const auto x1 = net.peer(2).model()->values();
    for (int c = 0; c < kDim; ++c) {
      EXPECT_NEAR(x1[static_cast<std::size_t>(c)],
                  x0[static_cast<std::size_t>(c)] - 0.1 * g2[static_cast<std::size_t>(c)] / divisor,
                  1e-6)
          << "rescale " << rescale << " coordinate " << c;
    }
  }
}

TEST(CodedProtocol, MalformedCodedGradientsAreDropped) {
  Actions out;
  auto peer = started_ring_peer0(3, out);
  peer->handle(1.0, GradientDone{as_vector(kThreePartitions), {}}, out);
  out.clear();
  peer->handle(1.1, CodedGradientArrived{1, 0, coded({1, 2}, {1, 1, 1})},
               out);  // {1,2}: not a block
  EXPECT_EQ(peer->dropped_messages(), 1);
  peer->handle(1.1, CodedGradientArrived{1, 0, coded({1}, {1, 1, 1})}, out);  // part of a block
  EXPECT_EQ(peer->dropped_messages(), 2);
  peer->handle(1.1, CodedGradientArrived{1, 0, coded({1, 7}, {1, 1})}, out);  // wrong size
  EXPECT_EQ(peer->dropped_messages(), 3);
  peer->handle(1.1, CodedGradientArrived{4, 0, coded({1, 7}, {1, 1, 1})}, out);  // not a neighbour
  EXPECT_EQ(peer->dropped_messages(), 4);
  peer->handle(1.1, CodedGradientArrived{1, -1, coded({1, 7}, {1, 1, 1})}, out);  // negative tag
  EXPECT_EQ(peer->dropped_messages(), 5);
  peer->handle(1.1, CodedGradientArrived{1, 0, nullptr}, out);
  EXPECT_EQ(peer->dropped_messages(), 6);
  auto with_role = std::make_shared<CodedGradient>(*coded({1, 7}, {1, 1, 1}));
  with_role->role = {0, 2};  // a role map while dynamic roles are off
  peer->handle(1.1, CodedGradientArrived{1, 0, with_role}, out);
  EXPECT_EQ(peer->dropped_messages(), 7);
  EXPECT_TRUE(all_of_type<IterationCompleted>(out).empty()) << "nothing dropped may count";

  // Tags at or past the run's length (3 iterations) come from no peer of this run; a model
  // with such a tag is dropped as well.
  peer->handle(1.1, CodedGradientArrived{1, 3, coded({1, 7}, {1, 1, 1})}, out);
  EXPECT_EQ(peer->dropped_messages(), 8);
  peer->handle(1.1, ModelArrived{1, std::int64_t{1} << 62, make_params({1, 1, 1})}, out);
  EXPECT_EQ(peer->dropped_messages(), 9);
  peer->handle(1.1, CodedGradientArrived{1, 0, coded({1, 7}, {1, std::nanf(""), 1})}, out);
  EXPECT_EQ(peer->drops().count(DropCause::kNonFinite), 1);
  EXPECT_EQ(peer->drops().count(DropCause::kNotInTheCode), 3);
  EXPECT_EQ(peer->drops().count(DropCause::kTagOutOfRange), 3);
  EXPECT_EQ(peer->dropped_messages(), 10);
  EXPECT_TRUE(all_of_type<IterationCompleted>(out).empty());

  peer->handle(1.2, CodedGradientArrived{1, 0, coded({1, 7}, {3, 3, 3})}, out);
  EXPECT_EQ(peer->dropped_messages(), 10);
  ASSERT_EQ(all_of_type<IterationCompleted>(out).size(), 1u);

  ProtocolConfig uncoded;
  uncoded.iterations = 3;
  PeerProtocol plain(0, testing::make_topology(TopologyKind::kRing, 8).schedule, uncoded,
                     make_params(initial_model()));
  plain.start(0, out);
  plain.handle(0.5, CodedGradientArrived{1, 0, coded({1, 7}, {1, 1, 1})}, out);
  EXPECT_EQ(plain.dropped_messages(), 1);
}

// After iteration 0 the peer is at k = 1: a tag-0 coded gradient no longer covers a block.
TEST(CodedProtocol, StaleCodedGradientsAreIgnored) {
  Actions out;
  auto peer = started_ring_peer0(3, out);
  peer->handle(1.0, GradientDone{as_vector(kThreePartitions), {}}, out);
  peer->handle(1.1, CodedGradientArrived{1, 0, coded({1, 7}, {3, 3, 3})}, out);
  ASSERT_EQ(peer->iteration(), 1);
  peer->handle(2.1, GradientDone{as_vector(kThreePartitions), {}}, out);
  out.clear();
  peer->handle(2.2, CodedGradientArrived{7, 0, coded({1, 7}, {3, 3, 3})}, out);
  EXPECT_EQ(peer->iteration(), 1);
  EXPECT_TRUE(all_of_type<IterationCompleted>(out).empty());
  peer->handle(2.3, CodedGradientArrived{7, 1, coded({1, 7}, {3, 3, 3})}, out);
  EXPECT_EQ(peer->iteration(), 2);
  const auto done = all_of_type<IterationCompleted>(out);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0]->record.iteration, 1);
  EXPECT_TRUE(done[0]->record.decodable);
}

// A coded peer behind all its neighbours skips to the slowest neighbour's iteration.
TEST(CodedProtocol, PeerBehindEveryNeighbourCatchesUp) {
  Actions out;
  auto peer = started_ring_peer0(10, out);
  peer->handle(0.5, ModelArrived{1, 5, make_params({1, 1, 1})}, out);
  peer->handle(0.5, ModelArrived{7, 3, make_params({1, 1, 1})}, out);
  peer->handle(1.0, GradientDone{as_vector(kThreePartitions), {}}, out);
  out.clear();
  peer->handle(1.1, CodedGradientArrived{1, 5, coded({1, 7}, {3, 3, 3})}, out);
  ASSERT_EQ(all_of_type<IterationCompleted>(out).size(), 1u);
  EXPECT_EQ(peer->iteration(), 3) << "the slowest neighbour (7) has sent tag 3";
  const auto starts = all_of_type<StartGradient>(out);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0]->iteration, 3);

  // Not behind every neighbour: no skip, whichever slot the silent neighbour has (7 sorts
  // after 1, and 1 before 7).
  auto other = started_ring_peer0(10, out);
  other->handle(0.5, ModelArrived{1, 5, make_params({1, 1, 1})}, out);
  other->handle(1.0, GradientDone{as_vector(kThreePartitions), {}}, out);
  other->handle(1.1, CodedGradientArrived{1, 5, coded({1, 7}, {3, 3, 3})}, out);
  EXPECT_EQ(other->iteration(), 1);
  auto mirror = started_ring_peer0(10, out);
  mirror->handle(0.5, ModelArrived{7, 5, make_params({1, 1, 1})}, out);
  mirror->handle(1.0, GradientDone{as_vector(kThreePartitions), {}}, out);
  mirror->handle(1.1, CodedGradientArrived{7, 5, coded({1, 7}, {3, 3, 3})}, out);
  EXPECT_EQ(mirror->iteration(), 1) << "peer 1 has sent nothing: it is not ahead";
}

// With dynamic roles a role must be a block of the sender's neighbourhood other than
// {sender}; a valid one changes what this peer computes for the sender next iteration.
TEST(CodedProtocol, DynamicRolesValidateAndApplyRoles) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  ProtocolConfig config = frc_config(10);
  config.coding.dynamic_roles = true;
  // Peer 5: neighbours 1, 4, 6, 9. Peer 1's neighbourhood: {1}, {0, 2}, {5, 13}.
  PeerProtocol peer(5, topo.schedule, config, make_params(initial_model()));
  Actions out;
  peer.start(0, out);
  const auto first = all_of_type<StartGradient>(out);
  ASSERT_EQ(first.size(), 1u);
  // Static roles first: its blocks in N[1] {5,13}, N[4] {0,5}, N[6] {2,5}, N[9] {5,8}.
  EXPECT_EQ(first[0]->partitions, (std::vector<PeerId>{5, 0, 2, 8, 13}));
  auto with_role = [&](std::vector<PeerId> role) {
    auto c = std::make_shared<CodedGradient>(*coded({1, 4}, std::vector<float>(kDim, 1.0f)));
    c->role = std::move(role);
    return c;
  };
  peer.handle(0.5, CodedGradientArrived{1, 0, with_role({1, 5})}, out);  // not a block of N[1]
  peer.handle(0.5, CodedGradientArrived{1, 0, with_role({1})}, out);     // {sender} is not a role
  EXPECT_EQ(peer.dropped_messages(), 2);
  peer.handle(0.5, CodedGradientArrived{1, 0, with_role({0, 2})}, out);
  EXPECT_EQ(peer.dropped_messages(), 2);
  // Finish iteration 0 (blocks {1,4} and {6,9} covered): iteration 1 computes {0, 2} for
  // peer 1 instead of {5, 13}.
  peer.handle(1.0, GradientDone{as_vector(std::vector<float>(5 * kDim, 1.0f)), {}}, out);
  out.clear();
  peer.handle(1.1, CodedGradientArrived{6, 0, coded({6, 9}, std::vector<float>(kDim, 1.0f))}, out);
  const auto next = all_of_type<StartGradient>(out);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0]->partitions, (std::vector<PeerId>{5, 0, 2, 8}));
}

// 16 peers on a torus with FRC and one peer 20 times slower: everyone finishes.
TEST(CodedProtocol, TorusWithOneVerySlowPeerFinishes) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) {
    return (i == 6 ? 20.0 : 1.0) + 0.1 * ((i + k) % 3);
  };
  LeastSquares model(kDim, 200, 2, 16);
  VirtualNetwork net(testing::make_peers(topo.schedule, frc_config(30), initial_model()), delays,
                     model);
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  for (PeerId p = 0; p < 16; ++p) EXPECT_EQ(net.peer(p).iteration(), 30) << p;
}

// Peer 5 of a 4x4 torus has blocks {1,4} and {6,9}; 1 and 4 are persistently slow, so with
// static roles block {1,4} is late every iteration. Dynamic roles spread them over the blocks.
// (Measured here: 9.0 s per iteration static, 1.4 s dynamic.)
double mean_iteration_time_of_peer5(bool dynamic_roles) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  ProtocolConfig config = frc_config(60);
  config.coding.dynamic_roles = dynamic_roles;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t) { return i == 1 || i == 4 ? 10.0 : 1.0; };
  LeastSquares model(kDim, 200, 2, 16);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model()), delays, model);
  double finished_s = 0;
  net.on_record = [&](const IterationRecord& r) {
    if (r.peer == 5) finished_s = r.update_s;
  };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  // Per iteration of progress: peer 5 may skip iterations (catch-up), so not per record.
  return finished_s / 60.0;
}

TEST(CodedProtocol, DynamicRolesSpreadBunchedStragglers) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 16);
  const auto n5 = topo.graph.neighbors(5);
  ASSERT_EQ(std::vector<PeerId>(n5.begin(), n5.end()), (std::vector<PeerId>{1, 4, 6, 9}));
  const double fixed = mean_iteration_time_of_peer5(false);
  const double dynamic = mean_iteration_time_of_peer5(true);
  EXPECT_GT(fixed, 5.0) << "static roles wait for a slow member of {1,4}";
  EXPECT_LT(dynamic, 0.5 * fixed) << "dynamic " << dynamic << " static " << fixed;
}

}  // namespace
}  // namespace fastk::consensus
