// Semantics of one peer's protocol: the updates it computes and what it accepts.
#include "consensus/peer_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

std::vector<float> initial_model(int dim) {
  std::vector<float> x(static_cast<std::size_t>(dim));
  for (int c = 0; c < dim; ++c) x[static_cast<std::size_t>(c)] = 0.1f * static_cast<float>(c);
  return x;
}

TEST(PeerProtocol, WaitingForEveryNeighbourUsesExactlyW) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, 9);
  ProtocolConfig config;
  config.iterations = 5;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.37 * ((i * 5 + k) % 4); };
  LeastSquares model(3, 50, 2, 9);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model(3)), delays, model);
  int records = 0;
  net.on_record = [&](const IterationRecord& r) {
    ++records;
    const auto nbrs = topo.graph.neighbors(r.peer);
    ASSERT_EQ(r.used.size(), nbrs.size());
    EXPECT_EQ(r.backups, 0);
    double sum = r.self_weight;
    for (std::size_t u = 0; u < r.used.size(); ++u) {
      EXPECT_DOUBLE_EQ(r.used_weights[u], topo.weights.coeff(r.peer, r.used[u]));
      sum += r.used_weights[u];
    }
    EXPECT_NEAR(r.self_weight, topo.weights.coeff(r.peer, r.peer), 1e-15);
    EXPECT_NEAR(sum, 1.0, 1e-12);
  };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  EXPECT_EQ(records, 9 * 5);
}

TEST(PeerProtocol, RowsSumToOneUnderBackupsForEveryRenormalisation) {
  const auto topo = testing::make_topology(TopologyKind::kRandomRegular, 12);
  for (auto rule : {Renormalisation::kReturnToSelf, Renormalisation::kUniform,
                    Renormalisation::kProportional}) {
    ProtocolConfig config;
    config.iterations = 6;
    config.renormalisation = rule;
    config.policy.kind = PolicyKind::kStatic;
    config.policy.backups = 2;
    LambdaDelays delays;
    delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + ((i * 7 + k * 3) % 5); };
    LeastSquares model(3, 50, 2, 12);
    VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model(3)), delays, model);
    int with_backups = 0;
    net.on_record = [&](const IterationRecord& r) {
      double sum = r.self_weight;
      for (double w : r.used_weights) sum += w;
      EXPECT_NEAR(sum, 1.0, 1e-12) << to_string(rule);
      EXPECT_GE(static_cast<int>(r.used.size()), r.awaited);
      EXPECT_EQ(r.awaited, r.neighbours - 2);
      with_backups += r.backups > 0 ? 1 : 0;
    };
    net.start();
    net.run();
    EXPECT_TRUE(net.all_finished());
    EXPECT_GT(with_backups, 0) << "the delays should make some peer skip a neighbour";
  }
}

// A link keeps its order: when peer 1's even-tag models to peer 0 take 0.5 s and its odd-tag
// ones 0.01 s, tag k+1 would overtake tag k; it is delivered after it instead, and policy
// full ends with the bits of a run without link delays.
TEST(PeerProtocol, ALinkKeepsItsOrderSoFullStaysExactUnderJitter) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 4);
  ProtocolConfig config;
  config.iterations = 12;
  auto final_models = [&](bool reorder) {
    LambdaDelays delays;
    delays.compute = [](PeerId, std::int64_t) { return 0.001; };
    delays.link = [reorder](PeerId from, PeerId to, std::int64_t k) {
      return reorder && from == 1 && to == 0 && k % 2 == 0 ? 0.5 : 0.01;
    };
    LeastSquares model(3, 50, 2, 4);
    VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model(3)), delays, model);
    net.start();
    net.run();
    EXPECT_TRUE(net.all_finished());
    std::vector<std::vector<float>> out;
    for (PeerId i = 0; i < 4; ++i) {
      const auto v = net.peer(i).model()->values();
      out.emplace_back(v.begin(), v.end());
    }
    return out;
  };
  EXPECT_EQ(final_models(true), final_models(false));
}

// With one peer the protocol is the centralized optimizer: plain SGD, and with the local
// step's state (momentum, Nesterov, warm-up and schedules, weight decay) learning::Sgd on the
// same gradients, in either update order.
TEST(PeerProtocol, WithOnePeerItIsTheCentralizedOptimizer) {
  auto schedule = std::make_shared<topology::StaticSchedule>(
      topology::Graph(1, {}), Eigen::MatrixXd::Identity(1, 1).sparseView());
  const learning::OptimizerSpec plain{.lr = 0.05};
  const std::vector<learning::OptimizerSpec> optimizers = {
      plain,
      {.lr = 0.05,
       .schedule = learning::ScheduleKind::kCosine,
       .warmup_iterations = 5,
       .momentum = 0.9,
       .weight_decay = 0.01},
      {.lr = 0.05,
       .schedule = learning::ScheduleKind::kStep,
       .step_iterations = 7,
       .gamma = 0.5,
       .momentum = 0.5,
       .nesterov = true}};
  const LeastSquares model(4, 30, 3, 1);
  const auto sgd_model = [&](const learning::OptimizerSpec& spec) {
    std::vector<float> x = initial_model(4);
    learning::Sgd sgd(spec, x.size(), 20);
    for (int k = 0; k < 20; ++k) {
      const auto g = model.gradient(x, model.batch_rows(0, k));
      sgd.step(x, std::vector<float>(g.begin(), g.end()), k);
    }
    return x;
  };
  const std::vector<float> plain_model = sgd_model(plain);
  for (const auto& optimizer : optimizers) {
    for (auto order : {UpdateOrder::kCombineThenAdapt, UpdateOrder::kAdaptThenCombine}) {
      ProtocolConfig config;
      config.iterations = 20;
      config.optimizer = optimizer;
      config.order = order;
      LambdaDelays delays;
      LeastSquares peer_model = model;
      VirtualNetwork net(testing::make_peers(schedule, config, initial_model(4)), delays,
                         peer_model);
      net.start();
      net.run();
      ASSERT_TRUE(net.all_finished());
      const std::vector<float> x = sgd_model(optimizer);
      const auto got = net.peer(0).model()->values();
      double from_plain = 0;
      for (std::size_t c = 0; c < x.size(); ++c) {
        EXPECT_NEAR(got[c], x[c], 1e-5) << c << " momentum " << optimizer.momentum;
        from_plain = std::max(from_plain, double(std::abs(got[c] - plain_model[c])));
      }
      if (optimizer.momentum > 0) {
        EXPECT_GT(from_plain, 1e-3) << "the optimizer's state made no difference";
      }
    }
  }
}

// Each update says, per neighbour of its round, when the neighbour's model came relative to
// the own gradient, whether it was mixed, how old it was and what it sent. On a ring with a
// 10x slow peer 0 under static b = 1: its neighbours mix the model that came first and rarely
// wait for peer 0's; what peer 0 gets has been waiting for it (arrived before its gradient).
TEST(PeerProtocol, RecordsWhoWaitedForWhom) {
  const auto topo = testing::make_topology(TopologyKind::kRing, 6);
  ProtocolConfig config;
  config.iterations = 40;
  config.policy.kind = PolicyKind::kStatic;
  config.policy.backups = 1;
  testing::SlowPeerDelays delays(3);
  LeastSquares model(3, 60, 2, 6);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model(3)), delays, model);
  int rows = 0, slow_used = 0, slow_rows = 0, early_at_slow = 0, at_slow = 0;
  std::int64_t bytes = 0;
  net.on_record = [&](const IterationRecord& r) {
    ASSERT_EQ(r.neighbour_records.size(), 2u);
    int used = 0;
    for (const NeighbourRecord& n : r.neighbour_records) {
      ++rows;
      bytes += n.bytes;
      used += n.used ? 1 : 0;
      EXPECT_EQ(n.used, std::find(r.used.begin(), r.used.end(), n.neighbour) != r.used.end());
      // A mixed model came by the update, and (staleness 0) is of this iteration or newer.
      if (n.used) {
        EXPECT_FALSE(std::isnan(n.arrival_s));
        EXPECT_LE(n.arrival_s, r.update_s - r.gradient_done_s + 1e-12);
        EXPECT_LE(n.tag_lag, 0.0);
      }
      if (n.neighbour == 0) {
        ++slow_rows;
        slow_used += n.used ? 1 : 0;
      }
      if (r.peer == 0 && !std::isnan(n.arrival_s)) {
        ++at_slow;
        early_at_slow += n.arrival_s < 0 ? 1 : 0;
      }
    }
    EXPECT_EQ(used, static_cast<int>(r.used.size()));
  };
  net.start();
  net.run();
  ASSERT_TRUE(net.all_finished());
  EXPECT_EQ(rows, 6 * 40 * 2);
  EXPECT_LT(slow_used, slow_rows / 2) << "peer 0's neighbours should not wait for it";
  EXPECT_GT(early_at_slow, at_slow * 9 / 10) << "peer 0 should find its neighbours' models there";
  // Every model sent was taken by a receiver (3 values of 4 bytes), and all were counted
  // once: each peer sends one per iteration to each neighbour, minus those not yet delivered
  // when a receiver finished.
  EXPECT_EQ(bytes % 12, 0);
  EXPECT_GT(bytes, 12 * 2 * 6 * 30);
  EXPECT_LE(bytes, 12 * 2 * 6 * 40);
}

TEST(PeerProtocol, CompleteGraphAdaptThenCombineEqualsCentralizedMiniBatchSgd) {
  const int n = 6, dim = 5, batch = 4, iterations = 30;
  const double lr = 0.05;
  const auto topo = testing::make_topology(TopologyKind::kComplete, n);
  ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = lr;
  config.order = UpdateOrder::kAdaptThenCombine;
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.5 * ((i + k) % 3); };
  LeastSquares model(dim, 200, batch, n);
  VirtualNetwork net(testing::make_peers(topo.schedule, config, initial_model(dim)), delays, model);
  net.start();
  net.run();
  ASSERT_TRUE(net.all_finished());

  // Centralized SGD on the union of the n batches of each iteration, in double.
  const std::vector<float> x0 = initial_model(dim);
  std::vector<double> x(x0.begin(), x0.end());
  for (int k = 0; k < iterations; ++k) {
    std::vector<int> rows;
    for (int i = 0; i < n; ++i) {
      const auto b = model.batch_rows(i, k);
      rows.insert(rows.end(), b.begin(), b.end());
    }
    const std::vector<float> xf(x.begin(), x.end());
    const auto g = model.gradient(xf, rows);
    for (int c = 0; c < dim; ++c)
      x[static_cast<std::size_t>(c)] -= lr * g[static_cast<std::size_t>(c)];
  }
  for (int i = 0; i < n; ++i) {
    const auto got = net.peer(i).model()->values();
    for (int c = 0; c < dim; ++c) {
      EXPECT_NEAR(got[static_cast<std::size_t>(c)], x[static_cast<std::size_t>(c)],
                  1e-5 * (1 + std::abs(x[static_cast<std::size_t>(c)])))
          << "peer " << i << " coordinate " << c;
    }
  }
}

// Drives one peer by hand: neighbours 1 and 2 of peer 0 on a 3-ring (complete graph).
class HandDriven : public ::testing::Test {
 protected:
  std::unique_ptr<PeerProtocol> make(const ProtocolConfig& config) {
    return std::make_unique<PeerProtocol>(0, topo_.schedule, config, make_params({1.0f, 2.0f}));
  }
  static Params model(float a, float b) { return make_params({a, b}); }
  static int count_completed(const Actions& actions) {
    int n = 0;
    for (const auto& a : actions) n += std::holds_alternative<IterationCompleted>(a) ? 1 : 0;
    return n;
  }
  topology::Topology topo_ = testing::make_topology(TopologyKind::kComplete, 3);
  Actions out_;
  const std::vector<float> zero_{0.0f, 0.0f};
};

TEST_F(HandDriven, StartSendsTheModelAndStartsTheGradient) {
  auto peer = make({});
  peer->start(0, out_);
  ASSERT_EQ(out_.size(), 2u);
  const auto& send = std::get<SendParams>(out_[0]);
  EXPECT_EQ(send.tag, 0);
  EXPECT_EQ(send.to, (std::vector<PeerId>{1, 2}));
  EXPECT_EQ(send.params.get(), peer->model().get()) << "the model is shared, not copied";
  EXPECT_EQ(std::get<StartGradient>(out_[1]).iteration, 0);
}

TEST_F(HandDriven, NewestMessageWinsAndStaleOnesAreNotFresh) {
  auto peer = make({});
  peer->start(0, out_);
  peer->handle(0.1, ModelArrived{1, 2, model(10, 10)}, out_);
  peer->handle(0.2, ModelArrived{1, 1, model(99, 99)}, out_);  // older tag: ignored
  peer->handle(0.3, ModelArrived{2, 0, model(4, 4)}, out_);
  out_.clear();
  peer->handle(1.0, GradientDone{as_vector(zero_), {}}, out_);
  ASSERT_EQ(count_completed(out_), 1);
  const auto& rec = std::get<IterationCompleted>(out_[0]).record;
  EXPECT_EQ(rec.used_tags, (std::vector<std::int64_t>{2, 0}));
  // Complete graph on 3: W = 1/3 everywhere.
  const auto x = peer->model()->values();
  EXPECT_NEAR(x[0], (1 + 10 + 4) / 3.0, 1e-6);
  EXPECT_NEAR(x[1], (2 + 10 + 4) / 3.0, 1e-6);
  // At k = 1, peer 2's tag-0 model is stale; peer 1's tag-2 model is still fresh.
  out_.clear();
  peer->handle(2.0, GradientDone{as_vector(zero_), {}}, out_);
  EXPECT_EQ(count_completed(out_), 0) << "full policy must wait for peer 2";
  peer->handle(2.5, ModelArrived{2, 1, model(0, 0)}, out_);
  EXPECT_EQ(count_completed(out_), 1);
}

TEST_F(HandDriven, BoundedStalenessAcceptsOlderTags) {
  ProtocolConfig config;
  config.staleness = 1;
  auto peer = make(config);
  peer->start(0, out_);
  peer->handle(0.1, ModelArrived{1, 0, model(1, 1)}, out_);
  peer->handle(0.1, ModelArrived{2, 0, model(1, 1)}, out_);
  peer->handle(1.0, GradientDone{as_vector(zero_), {}}, out_);
  out_.clear();
  peer->handle(2.0, GradientDone{as_vector(zero_), {}}, out_);  // k = 1, tags 0 accepted
  EXPECT_EQ(count_completed(out_), 1);
  out_.clear();
  peer->handle(3.0, GradientDone{as_vector(zero_), {}}, out_);  // k = 2, tag 0 too old
  EXPECT_EQ(count_completed(out_), 0);
}

TEST_F(HandDriven, MalformedMessagesAreCountedAndDropped) {
  auto peer = make({});
  peer->start(0, out_);
  peer->handle(0.1, ModelArrived{7, 0, model(1, 1)}, out_);          // not a neighbour
  peer->handle(0.1, ModelArrived{0, 0, model(1, 1)}, out_);          // itself
  peer->handle(0.1, ModelArrived{1, -3, model(1, 1)}, out_);         // negative tag
  peer->handle(0.1, ModelArrived{1, 0, make_params({1.0f})}, out_);  // wrong size
  peer->handle(0.1, ModelArrived{1, 0, nullptr}, out_);              // no payload
  EXPECT_EQ(peer->dropped_messages(), 5);
  EXPECT_EQ(peer->drops().count(DropCause::kNotNeighbour), 2);
  EXPECT_EQ(peer->drops().count(DropCause::kTagOutOfRange), 1);
  EXPECT_EQ(peer->drops().count(DropCause::kWrongSize), 2);
}

// One NaN mixed in makes the model NaN for good (and its neighbours' after it), and a huge
// value with a late tag would pin the slot: such models are dropped, counted, never mixed.
TEST_F(HandDriven, NonFiniteModelsAreDroppedNeverMixed) {
  auto peer = make({});
  peer->start(0, out_);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  peer->handle(0.1, ModelArrived{1, 0, make_params({0.5f, nan})}, out_);
  peer->handle(0.1, ModelArrived{2, 0, make_params({-inf, 0.5f})}, out_);
  peer->handle(1.0, GradientDone{as_vector(zero_), {}}, out_);
  EXPECT_EQ(count_completed(out_), 0) << "a dropped model may not count as arrived";
  EXPECT_EQ(peer->drops().count(DropCause::kNonFinite), 2);
  peer->handle(1.1, ModelArrived{1, 0, model(1, 1)}, out_);
  peer->handle(1.1, ModelArrived{2, 0, model(1, 1)}, out_);
  EXPECT_EQ(count_completed(out_), 1);
  for (float v : peer->model()->values()) EXPECT_TRUE(std::isfinite(v));
}

TEST_F(HandDriven, ANonFiniteOwnGradientStopsThePeerNamingTheLearningRate) {
  auto peer = make({});
  peer->start(0, out_);
  const std::vector<float> diverged{0.0f, std::numeric_limits<float>::infinity()};
  try {
    peer->handle(1.0, GradientDone{as_vector(diverged), {}}, out_);
    ADD_FAILURE() << "a non-finite gradient was stepped with";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("iteration 0"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("optimizer.lr"));
  }
}

// Coming back (docs/protocol.md §6.4). From a checkpoint: the first iteration is the saved one,
// so the model goes out with that tag and neighbours' newer models are fresh.
TEST_F(HandDriven, AResumedPeerGoesOnAtItsCheckpointsIteration) {
  ProtocolConfig config;
  config.iterations = 10;
  auto peer = make(config);
  peer->resume_at(6);
  peer->handle(0.0, ModelArrived{1, 7, model(10, 10)}, out_);  // kept from the start-up
  peer->handle(0.0, ModelArrived{2, 6, model(4, 4)}, out_);
  out_.clear();
  peer->start(0.1, out_);
  EXPECT_EQ(std::get<SendParams>(out_[0]).tag, 6);
  EXPECT_EQ(std::get<StartGradient>(out_[1]).iteration, 6);
  out_.clear();
  peer->handle(1.0, GradientDone{as_vector(zero_), {}}, out_);
  ASSERT_EQ(count_completed(out_), 1) << "both neighbours' models are fresh at iteration 6";
  EXPECT_EQ(peer->iteration(), 7);
  EXPECT_NEAR(peer->model()->values()[0], (1 + 10 + 4) / 3.0, 1e-6);
  EXPECT_THROW(peer->resume_at(2), std::logic_error);
  auto done = make(config);
  done->resume_at(10);
  out_.clear();
  done->start(0, out_);
  EXPECT_TRUE(done->finished());
  EXPECT_THROW(make(config)->resume_at(11), std::invalid_argument);
  EXPECT_THROW(make(config)->resume_at(-1), std::invalid_argument);
}

// Without a checkpoint: the plain average of the neighbours' newest models, at their newest
// tag, once every neighbour was heard; nothing is computed or sent before.
TEST_F(HandDriven, AJoiningPeerStartsFromItsNeighboursAverageAtTheirNewestTag) {
  ProtocolConfig config;
  config.iterations = 20;
  auto peer = make(config);
  peer->join(0, out_);
  EXPECT_TRUE(peer->joining());
  EXPECT_TRUE(out_.empty());
  peer->handle(0.1, ModelArrived{1, 8, model(2, 4)}, out_);
  EXPECT_TRUE(out_.empty()) << "peer 2 is not heard yet";
  peer->handle(0.2, ModelArrived{2, 11, model(6, 8)}, out_);
  EXPECT_FALSE(peer->joining());
  EXPECT_EQ(peer->iteration(), 11);
  EXPECT_EQ(peer->model()->values()[0], 4.0f);
  EXPECT_EQ(peer->model()->values()[1], 6.0f);
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_EQ(std::get<SendParams>(out_[0]).tag, 11);
  EXPECT_EQ(std::get<StartGradient>(out_[1]).iteration, 11);
}

// A neighbour that stays silent does not keep a joining peer out for good: after the
// silence timeout it joins from the neighbours heard.
TEST_F(HandDriven, AJoiningPeerGoesOnWithTheNeighboursHeardAfterTheSilenceTimeout) {
  ProtocolConfig config;
  config.iterations = 20;
  config.silence_timeout_s = 2;
  auto peer = make(config);
  peer->join(0, out_);
  ASSERT_EQ(std::get<ArmTimer>(out_.at(0)).at_s, 2.0);
  out_.clear();
  peer->handle(1.5, ModelArrived{1, 5, model(3, 3)}, out_);
  EXPECT_TRUE(peer->joining()) << "peer 2 may still come";
  peer->handle(2.0, TimerFired{}, out_);
  EXPECT_FALSE(peer->joining());
  EXPECT_EQ(peer->iteration(), 5);
  EXPECT_EQ(peer->model()->values()[0], 3.0f);
  // Nobody at all by then: neighbours that finished or left send nothing, and waiting on
  // would hang the peer for good.
  auto alone = make(config);
  alone->join(0, out_);
  try {
    alone->handle(2.0, TimerFired{}, out_);
    ADD_FAILURE() << "a peer that heard nobody joined";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("peer 0 cannot rejoin"));
  }
}

// A neighbour that was restarted gets the last model again: its neighbours, waiting for it,
// would not send that tag a second time.
TEST_F(HandDriven, ANeighbourThatComesBackGetsTheLastModelAgain) {
  auto peer = make({});
  peer->handle(0, NeighbourBack{1}, out_);
  EXPECT_TRUE(out_.empty()) << "nothing sent yet";
  peer->start(0, out_);
  const Params sent = std::get<SendParams>(out_[0]).params;
  out_.clear();
  peer->handle(0.5, NeighbourBack{2}, out_);
  ASSERT_EQ(out_.size(), 1u);
  const auto& again = std::get<SendParams>(out_[0]);
  EXPECT_EQ(again.to, (std::vector<PeerId>{2}));
  EXPECT_EQ(again.tag, 0);
  EXPECT_EQ(again.params.get(), sent.get());
  out_.clear();
  peer->handle(0.5, NeighbourBack{7}, out_);  // not a neighbour: nothing
  EXPECT_TRUE(out_.empty());
}

TEST(AllFinite, FindsANaNOrInfinityAnywhere) {
  std::vector<float> values(1000, 1.5f);
  EXPECT_TRUE(all_finite(values));
  EXPECT_TRUE(all_finite({}));
  values[0] = std::numeric_limits<float>::max();
  values[1] = -std::numeric_limits<float>::denorm_min();
  EXPECT_TRUE(all_finite(values));
  for (std::size_t at : {0, 517, 999}) {
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()}) {
      auto poisoned = values;
      poisoned[at] = bad;
      EXPECT_FALSE(all_finite(poisoned)) << bad << " at " << at;
    }
  }
}

TEST_F(HandDriven, GradientWithoutRequestIsARuntimeBug) {
  auto peer = make({});
  EXPECT_THROW(peer->handle(0, GradientDone{as_vector(zero_), {}}, out_), std::logic_error);
  peer->start(0, out_);
  EXPECT_THROW(peer->handle(0, GradientDone{as_vector(std::vector<float>{1.0f}), {}}, out_),
               std::logic_error);
}

TEST_F(HandDriven, ANeighbourThatLeftIsNoLongerAwaited) {
  auto peer = make({});
  peer->start(0, out_);
  peer->handle(0.1, ModelArrived{1, 0, model(1, 1)}, out_);
  out_.clear();
  peer->handle(1.0, GradientDone{as_vector(zero_), {}}, out_);
  EXPECT_EQ(count_completed(out_), 0);
  peer->handle(1.5, NeighbourLeft{2}, out_);
  ASSERT_EQ(count_completed(out_), 1);
  // The departure goes out first, once, as an action: the runtime keeps no rule of its own.
  const auto& gone = std::get<NeighbourGone>(out_[0]);
  EXPECT_EQ(gone.peer, 2);
  EXPECT_TRUE(gone.said_goodbye);
  EXPECT_EQ(gone.iteration, 0);
  EXPECT_EQ(std::get<IterationCompleted>(out_[1]).record.used, (std::vector<PeerId>{1}));
  out_.clear();
  peer->handle(2.0, TimerFired{}, out_);
  for (const auto& action : out_) EXPECT_FALSE(std::holds_alternative<NeighbourGone>(action));
}

TEST_F(HandDriven, ASilentNeighbourStopsBeingAwaitedAfterTheTimeout) {
  ProtocolConfig config;
  config.silence_timeout_s = 5;
  auto peer = make(config);
  peer->start(0, out_);
  peer->handle(0.1, ModelArrived{1, 0, model(1, 1)}, out_);
  out_.clear();
  peer->handle(1.0, GradientDone{as_vector(zero_), {}}, out_);
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_DOUBLE_EQ(std::get<ArmTimer>(out_[0]).at_s, 5.0);
  out_.clear();
  peer->handle(4.0, TimerFired{}, out_);  // early timers are harmless
  EXPECT_EQ(count_completed(out_), 0);
  peer->handle(5.0, TimerFired{}, out_);
  EXPECT_EQ(count_completed(out_), 1);
  // Neighbour 2 is reported gone (silent) once; a message brings it back, and a second
  // silence is a second departure.
  const auto departures = [&] {
    std::vector<NeighbourGone> found;
    for (const auto& action : out_)
      if (const auto* gone = std::get_if<NeighbourGone>(&action)) found.push_back(*gone);
    return found;
  };
  ASSERT_EQ(departures().size(), 1u);
  EXPECT_EQ(departures()[0].peer, 2);
  EXPECT_FALSE(departures()[0].said_goodbye);
  out_.clear();
  peer->handle(6.0, TimerFired{}, out_);  // neighbour 1, last heard at 0.1, is silent now too
  ASSERT_EQ(departures().size(), 1u);
  EXPECT_EQ(departures()[0].peer, 1);
  out_.clear();
  peer->handle(6.5, TimerFired{}, out_);
  EXPECT_TRUE(departures().empty()) << "a departure is reported once";
  peer->handle(7.0, ModelArrived{2, 1, model(1, 1)}, out_);
  EXPECT_TRUE(departures().empty());
  out_.clear();
  peer->handle(12.5, TimerFired{}, out_);
  ASSERT_EQ(departures().size(), 1u);  // neighbour 2 came back and went silent again
  EXPECT_EQ(departures()[0].peer, 2);
  EXPECT_EQ(departures()[0].iteration, 1);
  out_.clear();
  peer->handle(13.0, NeighbourLeft{2}, out_);  // its BYE, late: a departure of its own, at once
  ASSERT_EQ(departures().size(), 1u);
  EXPECT_TRUE(departures()[0].said_goodbye);
}

}  // namespace
}  // namespace fastk::consensus
