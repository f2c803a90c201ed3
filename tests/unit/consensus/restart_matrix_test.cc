// The protocol's guard for a peer that is killed and comes back (docs/protocol.md §6.4), the
// case of tests/system/protocol_matrix_test.cc that real peers cannot make deterministic
// (where a peer dies depends on the real timing): four peers on a ring driven in one fixed
// order, peer 1 lost at iteration 15 and started again from its checkpoint of iteration 12
// (resume_at) or without one (join). Every peer's final model must be the recorded one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <functional>
#include <optional>

#include "isa/level.h"
#include "tests/support/golden.h"
#include "tests/support/toy_runtime.h"

namespace fastk::consensus {
namespace {

using testing::LeastSquares;

constexpr int kPeers = 4, kDim = 5, kIterations = 40, kLost = 1;

struct Delivery {
  PeerId to = 0;
  PeerId from = 0;
  std::int64_t tag = 0;
  Params params;  // a model; null: a gradient that is done
};

// One fixed order: every action's effect goes to the back of one queue.
class LockstepRun {
 public:
  explicit LockstepRun(const ProtocolConfig& config)
      : config_(config),
        schedule_(testing::make_topology(topology::TopologyKind::kRing, kPeers).schedule),
        gradients_(kDim, 64, 2, kPeers) {
    for (int i = 0; i < kPeers; ++i) peers_.push_back(make(i, initial()));
  }

  void start() {
    for (int i = 0; i < kPeers; ++i) act(i, [&](Actions& out) { peers_[i]->start(0, out); });
  }

  // Runs until the queue is empty, or `pause` says so before a delivery.
  void run(const std::function<bool()>& pause = [] { return false; }) {
    while (!queue_.empty() && !pause()) {
      Delivery d = std::move(queue_.front());
      queue_.pop_front();
      if (!peers_[d.to] || peers_[d.to]->finished()) continue;  // lost with the dead peer
      if (d.params) {
        act(d.to, [&](Actions& out) {
          peers_[d.to]->handle(0, ModelArrived{d.from, d.tag, d.params}, out);
        });
      } else {
        auto result = gradients_.collect(d.to, d.tag);
        act(d.to, [&](Actions& out) {
          peers_[d.to]->handle(0, GradientDone{as_vector(result.gradient), result.stats}, out);
        });
      }
    }
  }

  void kill(PeerId peer) { peers_[peer].reset(); }

  // Back from a checkpoint (x(iteration)), or joining without one.
  void restart(PeerId peer, std::optional<std::pair<std::int64_t, Params>> checkpoint) {
    peers_[peer] = make(peer, checkpoint ? checkpoint->second : initial());
    act(peer, [&](Actions& out) {
      if (checkpoint) {
        peers_[peer]->resume_at(checkpoint->first);
        peers_[peer]->start(0, out);
      } else {
        peers_[peer]->join(0, out);
      }
    });
    for (PeerId j : peers_[peer]->contacts()) {
      act(j, [&](Actions& out) { peers_[j]->handle(0, NeighbourBack{peer}, out); });
    }
  }

  const PeerProtocol* peer(PeerId i) const { return peers_[i].get(); }

  testutil::GoldenCase prints() const {
    testutil::GoldenCase prints;
    for (int i = 0; i < kPeers; ++i) {
      EXPECT_TRUE(peers_[i]->finished()) << "peer " << i;
      const auto values = peers_[i]->model()->values();
      prints["model-" + std::to_string(i)] = testutil::fingerprint(
          std::string(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
    }
    return prints;
  }

 private:
  std::unique_ptr<PeerProtocol> make(PeerId i, Params initial) {
    return std::make_unique<PeerProtocol>(i, schedule_, config_, std::move(initial));
  }
  static Params initial() { return make_params(std::vector<float>(kDim, 0.5f)); }

  template <typename Event>
  void act(PeerId peer, Event&& event) {
    Actions out;
    event(out);
    for (auto& action : out) {
      if (auto* send = std::get_if<SendParams>(&action)) {
        for (PeerId to : send->to) queue_.push_back({to, peer, send->tag, send->params});
      } else if (auto* grad = std::get_if<StartGradient>(&action)) {
        gradients_.begin(peer, *grad);
        queue_.push_back({peer, peer, grad->iteration, nullptr});
      }
    }
  }

  ProtocolConfig config_;
  std::shared_ptr<const topology::TopologySchedule> schedule_;
  LeastSquares gradients_;
  std::vector<std::unique_ptr<PeerProtocol>> peers_;
  std::deque<Delivery> queue_;
};

class RestartMatrix : public ::testing::TestWithParam<std::string> {};

TEST_P(RestartMatrix, EveryFinalModelIsTheRecordedOne) {
  // The mix's kernels of one level give the same bits on every CPU: the baseline's, chosen
  // here before anything in this process asks (ctest runs each test in a process of its own).
  ::setenv(isa::kOverrideVariable, "x86-64", 1);
  ASSERT_EQ(isa::kernel_level(), isa::Level::kX86_64) << "run this test in a process of its own";
  ProtocolConfig config;
  config.iterations = kIterations;
  config.optimizer.lr = 0.05;
  config.optimizer.momentum = 0.5;
  LockstepRun run(config);
  run.start();
  std::optional<std::pair<std::int64_t, Params>> checkpoint;
  run.run([&] {
    const PeerProtocol* lost = run.peer(kLost);
    if (lost->iteration() == 12 && !checkpoint) checkpoint.emplace(12, lost->model());
    return lost->iteration() == 15;
  });
  ASSERT_TRUE(checkpoint);
  run.kill(kLost);
  run.run();  // the others go on as far as they can without it
  run.restart(kLost, GetParam() == "resume" ? checkpoint : std::nullopt);
  run.run();
  testutil::expect_golden("protocol_matrix.txt", "restart_" + GetParam(), run.prints());
}

INSTANTIATE_TEST_SUITE_P(Cases, RestartMatrix, ::testing::Values("resume", "join"));

}  // namespace
}  // namespace fastk::consensus
