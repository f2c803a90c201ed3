// Where the protocol writes its models (PeerProtocol::set_buffer_source, the hook the
// shared-memory runtime uses) and a gradient handed over (GradientDone): neither may change a
// single bit of what the protocol computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "consensus/peer_protocol.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LambdaDelays;
using testing::LeastSquares;
using topology::TopologyKind;

constexpr float kGarbage = std::numeric_limits<float>::quiet_NaN();

// A buffer handed out by a Pool, so a test can tell where a model lives.
class PoolBuffer final : public MutableParamBuffer {
 public:
  PoolBuffer(int pool, std::size_t floats) : pool_(pool), values_(floats, kGarbage) {}
  std::span<const float> values() const override { return values_; }
  std::span<float> writable_values() override { return values_; }
  int pool() const { return pool_; }

 private:
  int pool_;
  std::vector<float> values_;
};

// A BufferSource like the runtime's: reuses a buffer once nobody else holds it (with its
// old values still in it), otherwise makes one filled with NaN, so a value the protocol
// forgets to write shows in the result. Up to `limit` buffers; then nullptr.
class Pool {
 public:
  Pool(int id, std::size_t floats, std::size_t limit = 64)
      : id_(id), floats_(floats), limit_(limit) {}
  std::shared_ptr<MutableParamBuffer> give() {
    ++asked;
    for (auto& buffer : buffers_) {
      if (buffer.use_count() == 1) {
        ++given;
        return buffer;
      }
    }
    if (buffers_.size() == limit_) return nullptr;
    buffers_.push_back(std::make_shared<PoolBuffer>(id_, floats_));
    ++given;
    return buffers_.back();
  }
  BufferSource source() {
    return [this] { return give(); };
  }
  int asked = 0, given = 0;

 private:
  int id_;
  std::size_t floats_, limit_;
  std::vector<std::shared_ptr<PoolBuffer>> buffers_;
};

std::vector<float> initial_model(int dim) {
  std::vector<float> x(static_cast<std::size_t>(dim));
  for (int c = 0; c < dim; ++c) x[static_cast<std::size_t>(c)] = 0.1f * static_cast<float>(c) - 1;
  return x;
}

constexpr int kPeers = 9, kDim = 6, kIterations = 12;

ProtocolConfig config_for(UpdateOrder order) {
  ProtocolConfig config;
  config.iterations = kIterations;
  config.optimizer.lr = 0.07;
  config.order = order;
  config.policy.kind = PolicyKind::kStatic;
  config.policy.backups = 1;
  return config;
}

struct RunResult {
  std::vector<std::vector<float>> models;  // final model of each peer
  int records = 0;
  int records_in_pool_buffers = 0;  // models right after an update that live in the own pool
};

// A torus of 9 running 12 iterations with uneven compute times. `pools` (one per peer, or
// empty) become the peers' buffer sources.
RunResult run_torus(UpdateOrder order, std::vector<std::unique_ptr<Pool>>* pools) {
  const auto topo = testing::make_topology(TopologyKind::kTorus, kPeers);
  auto peers = testing::make_peers(topo.schedule, config_for(order), initial_model(kDim));
  if (pools) {
    for (int i = 0; i < kPeers; ++i) {
      peers[static_cast<std::size_t>(i)]->set_buffer_source(
          (*pools)[static_cast<std::size_t>(i)]->source());
    }
  }
  LambdaDelays delays;
  delays.compute = [](PeerId i, std::int64_t k) { return 1.0 + 0.31 * ((i * 5 + k * 3) % 7); };
  delays.link = [](PeerId from, PeerId to, std::int64_t k) {
    return 0.05 + 0.2 * ((from + 2 * to + k) % 3);
  };
  LeastSquares model(kDim, 80, 3, kPeers);
  VirtualNetwork net(std::move(peers), delays, model);
  RunResult result;
  net.on_record = [&](const IterationRecord& r) {
    ++result.records;
    const auto* buffer = dynamic_cast<const PoolBuffer*>(net.peer(r.peer).model().get());
    if (buffer && buffer->pool() == r.peer) ++result.records_in_pool_buffers;
  };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  for (int i = 0; i < kPeers; ++i) {
    const auto x = net.peer(i).model()->values();
    result.models.emplace_back(x.begin(), x.end());
  }
  return result;
}

void expect_same_bits(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.models.size(), b.models.size());
  for (std::size_t i = 0; i < a.models.size(); ++i) {
    ASSERT_EQ(a.models[i].size(), b.models[i].size());
    EXPECT_EQ(std::memcmp(a.models[i].data(), b.models[i].data(), a.models[i].size() * 4), 0)
        << "peer " << i << ": " << a.models[i][0] << " vs " << b.models[i][0];
    for (float v : a.models[i]) ASSERT_TRUE(std::isfinite(v)) << "peer " << i;
  }
}

std::vector<std::unique_ptr<Pool>> make_pools(std::size_t limit = 64) {
  std::vector<std::unique_ptr<Pool>> pools;
  for (int i = 0; i < kPeers; ++i) pools.push_back(std::make_unique<Pool>(i, kDim, limit));
  return pools;
}

TEST(BufferSource, ModelsAreWrittenIntoTheSourcesBuffersWithTheSameBits) {
  for (auto order : {UpdateOrder::kCombineThenAdapt, UpdateOrder::kAdaptThenCombine}) {
    SCOPED_TRACE(to_string(order));
    const RunResult own = run_torus(order, nullptr);
    auto pools = make_pools();
    const RunResult sourced = run_torus(order, &pools);
    expect_same_bits(own, sourced);
    EXPECT_EQ(own.records_in_pool_buffers, 0);
    EXPECT_EQ(sourced.records, kPeers * kIterations);
    EXPECT_EQ(sourced.records_in_pool_buffers, sourced.records)
        << "every new model must be in a buffer of the peer's own source";
    // One buffer per update, and for adapt-then-combine one more for the stepped model y.
    const int per_iteration = order == UpdateOrder::kCombineThenAdapt ? 1 : 2;
    for (const auto& pool : pools) EXPECT_EQ(pool->given, per_iteration * kIterations);
  }
}

TEST(BufferSource, ASourceWithoutBuffersFallsBackToTheProtocolsOwn) {
  for (std::size_t limit :
       {std::size_t{0}, std::size_t{1}}) {  // never a buffer; one, mostly still in use
    SCOPED_TRACE(limit);
    const RunResult own = run_torus(UpdateOrder::kCombineThenAdapt, nullptr);
    auto pools = make_pools(limit);
    const RunResult sourced = run_torus(UpdateOrder::kCombineThenAdapt, &pools);
    expect_same_bits(own, sourced);
    for (const auto& pool : pools) {
      EXPECT_EQ(pool->asked, kIterations) << "the protocol must ask its source first";
      EXPECT_LT(pool->given, kIterations);
    }
    if (limit == 0) {
      EXPECT_EQ(sourced.records_in_pool_buffers, 0);
    } else {
      EXPECT_GT(sourced.records_in_pool_buffers, 0);
    }
  }
}

// Peer 0 of the complete graph on 3, driven by hand.
class Driven : public ::testing::Test {
 protected:
  std::unique_ptr<PeerProtocol> make(UpdateOrder order = UpdateOrder::kCombineThenAdapt) {
    ProtocolConfig config;
    config.iterations = 6;
    config.optimizer.lr = 0.5;
    config.order = order;
    return std::make_unique<PeerProtocol>(0, topo_.schedule, config, make_params({1.0f, 2.0f}));
  }
  static std::vector<float> gradient(std::int64_t k) {
    return {0.25f + 0.5f * static_cast<float>(k), -1.0f / static_cast<float>(k + 3)};
  }
  // Both neighbours' tag-k models, at time now_s.
  static void deliver(PeerProtocol& peer, std::int64_t k, double now_s, Actions& out) {
    const auto kf = static_cast<float>(k);
    peer.handle(now_s, ModelArrived{1, k, make_params({kf, 3.0f - kf})}, out);
    peer.handle(now_s, ModelArrived{2, k, make_params({-kf, 0.125f * kf})}, out);
  }
  static std::vector<float> values(const PeerProtocol& peer) {
    const auto x = peer.model()->values();
    return {x.begin(), x.end()};
  }
  topology::Topology topo_ = testing::make_topology(TopologyKind::kComplete, 3);
  Actions out_;
};

TEST_F(Driven, ABufferOfTheWrongSizeIsALogicErrorNamingBothSizes) {
  auto peer = make();
  peer->set_buffer_source([] {
    return std::make_shared<VectorParams>(std::vector<float>{0.0f, 0.0f, 0.0f});
  });
  peer->start(0, out_);
  deliver(*peer, 0, 0.5, out_);
  try {
    peer->handle(1.0, GradientDone{as_vector(gradient(0)), {}}, out_);
    ADD_FAILURE() << "a 3-value buffer for a 2-value model was accepted";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gave 3 values, expected 2"), std::string::npos) << what;
  }
}

TEST_F(Driven, TheSourcesBufferBecomesTheModel) {
  auto peer = make();
  Pool pool(0, 2);
  peer->set_buffer_source(pool.source());
  const Params initial = peer->model();
  peer->start(0, out_);
  deliver(*peer, 0, 0.5, out_);
  peer->handle(1.0, GradientDone{as_vector(gradient(0)), {}}, out_);
  ASSERT_EQ(peer->iteration(), 1);
  const auto* buffer = dynamic_cast<const PoolBuffer*>(peer->model().get());
  ASSERT_NE(buffer, nullptr) << "the new model is not in the source's buffer";
  EXPECT_EQ(pool.given, 1);
  // x(1) = (x(0) + x_1 + x_2) / 3 - lr g.
  const auto x = peer->model()->values();
  EXPECT_NEAR(x[0], (1.0 + 0.0 + 0.0) / 3 - 0.5 * 0.25, 1e-6);
  EXPECT_NEAR(x[1], (2.0 + 3.0 + 0.0) / 3 - 0.5 * (-1.0 / 3), 1e-6);
  // The next iteration's model goes out from that buffer.
  bool sent = false;
  for (const auto& action : out_) {
    if (const auto* send = std::get_if<SendParams>(&action); send && send->tag == 1) {
      EXPECT_EQ(send->params.get(), buffer);
      sent = true;
    }
  }
  EXPECT_TRUE(sent);
  EXPECT_NE(peer->model(), initial);
}

// A gradient's vector handed over (GradientDone) and kept, versus a copy of it, on two
// identical peers fed the same events, the gradient first in even iterations and the
// neighbours first in odd ones.
TEST_F(Driven, AHandedOverGradientGivesTheSameModelsAndAVectorThatIsNoLongerUsed) {
  for (auto order : {UpdateOrder::kCombineThenAdapt, UpdateOrder::kAdaptThenCombine}) {
    SCOPED_TRACE(to_string(order));
    auto copying = make(order);
    auto handing = make(order);
    Actions copy_out, hand_out;
    copying->start(0, copy_out);
    handing->start(0, hand_out);
    std::vector<float> spare;  // what the caller got back, reused for the next gradient
    const float* handed_before = nullptr;
    for (std::int64_t k = 0; k < 6; ++k) {
      const bool gradient_first = k % 2 == 0;
      const double gradient_s = static_cast<double>(k) + 0.5;
      const double models_s = gradient_s + (gradient_first ? 0.25 : -0.25);
      if (!gradient_first) {
        deliver(*copying, k, models_s, copy_out);
        deliver(*handing, k, models_s, hand_out);
      }
      const std::vector<float> g = gradient(k);
      copying->handle(gradient_s, GradientDone{as_vector(g), {}}, copy_out);
      spare.assign(g.begin(), g.end());  // computed into the vector handed back last time
      const float* handed = spare.data();
      spare = handing->handle(gradient_s, GradientDone{std::move(spare), {}}, hand_out);
      if (order == UpdateOrder::kCombineThenAdapt) {
        // Kept, and the previous iteration's vector (its update is done) handed back.
        EXPECT_NE(spare.data(), handed) << "k = " << k;
        if (handed_before) {
          EXPECT_EQ(spare.data(), handed_before) << "k = " << k;
        }
      }
      handed_before = handed;
      // The caller may do anything with it now: the protocol must not read it again.
      for (float& v : spare) v = kGarbage;
      if (gradient_first) {
        deliver(*copying, k, models_s, copy_out);
        deliver(*handing, k, models_s, hand_out);
      }
      ASSERT_EQ(copying->iteration(), k + 1);
      ASSERT_EQ(handing->iteration(), k + 1);
      const auto a = values(*copying), b = values(*handing);
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
          << "k = " << k << ": " << a[0] << ", " << a[1] << " vs " << b[0] << ", " << b[1];
      EXPECT_TRUE(std::isfinite(b[0]) && std::isfinite(b[1])) << "k = " << k;
    }
    EXPECT_TRUE(handing->finished());
  }
}

TEST_F(Driven, HandOverGradientStillRefusesMisuse) {
  auto peer = make();
  EXPECT_THROW(peer->handle(0, GradientDone{as_vector(gradient(0)), {}}, out_), std::logic_error)
      << "no gradient outstanding";
  peer->start(0, out_);
  EXPECT_THROW(peer->handle(0, GradientDone{as_vector(std::vector<float>{1.0f}), {}}, out_),
               std::logic_error)
      << "wrong size";
  const auto back = peer->handle(1, GradientDone{as_vector(gradient(0)), {}}, out_);
  EXPECT_TRUE(back.empty()) << "nothing to hand back at the first gradient";
  EXPECT_THROW(peer->handle(1, GradientDone{as_vector(gradient(0)), {}}, out_), std::logic_error)
      << "the same gradient twice";
}

}  // namespace
}  // namespace fastk::consensus
