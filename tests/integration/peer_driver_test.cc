// N peer drivers (node/peer/peer_driver.h) on N threads of this process, over the in-process
// link and over real ZeroMQ sockets (ipc and tcp on loopback): the real event loop, protocol,
// compute thread and wire decoder, with a least-squares model for gradients so that a run
// takes milliseconds. Under policy full a run is exact D-PSGD whatever the timing, so its
// final models must equal, bit for bit, those of the same peers in the virtual-time loop.
#include "node/peer/peer_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "node/launch/progress.h"
#include "node/peer/outbound_queue.h"
#include "node/transport/in_process_link.h"
#include "node/transport/zmq_transport.h"
#include "node/wire/compressed_payload.h"
#include "tests/support/temp_dir.h"
#include "tests/support/toy_runtime.h"

namespace fastk::node::peer {
namespace {

using consensus::testing::LeastSquares;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr int kDim = 6;
const wire::HelloInfo kRun{0xfa57, 0};  // peer_count set per test

// How the drivers of a test reach each other.
enum class LinkKind { kInProcess, kIpc, kTcp };

std::string name_of(LinkKind kind) {
  switch (kind) {
    case LinkKind::kInProcess:
      return "in_process";
    case LinkKind::kIpc:
      return "ipc";
    case LinkKind::kTcp:
      return "tcp";
  }
  return "?";
}

// One link per peer of `topology`, of the given kind, all connected.
class Links {
 public:
  Links(LinkKind kind, const topology::Topology& topology, const wire::HelloInfo& run,
        int capacity = 32)
      : network_(topology.graph.size(), capacity) {
    const int n = topology.graph.size();
    std::vector<std::vector<wire::PeerId>> neighbours(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      for (int j : topology.graph.neighbors(i))
        neighbours[i].push_back(static_cast<wire::PeerId>(j));
    }
    std::vector<transport::ZmqTransport*> zmq;
    for (int i = 0; i < n; ++i) {
      const wire::WirePeers peers(static_cast<wire::PeerId>(i), run, neighbours[i]);
      if (kind == LinkKind::kInProcess) {
        links_.push_back(
            std::make_unique<transport::InProcessLink>(network_, peers, neighbours[i]));
        continue;
      }
      const std::string bind = kind == LinkKind::kTcp
                                   ? std::string("tcp://127.0.0.1:*")
                                   : "ipc://" + (dir_ / ("peer-" + std::to_string(i))).string();
      auto link = std::make_unique<transport::ZmqTransport>(peers, bind);
      zmq.push_back(link.get());
      links_.push_back(std::move(link));
    }
    for (std::size_t i = 0; i < zmq.size(); ++i) {
      for (wire::PeerId j : neighbours[i]) zmq[i]->connect(j, zmq[j]->endpoint());
    }
  }
  transport::Link& operator[](int i) { return *links_[static_cast<std::size_t>(i)]; }
  transport::InProcessNetwork& network() { return network_; }

 private:
  // Short: a Unix socket's path has at most 107 bytes.
  std::filesystem::path dir_ = testutil::fresh_test_dir("fk");
  transport::InProcessNetwork network_;
  std::vector<std::unique_ptr<transport::Link>> links_;
};

// A whole run: one protocol, compute thread and driver per peer, each driver on a thread.
struct Neighbourhood {
  Neighbourhood(LinkKind kind, topology::TopologyKind shape, int n,
                consensus::ProtocolConfig protocol_config)
      : topology(consensus::testing::make_topology(shape, n)),
        hello{kRun.run_id, static_cast<std::uint32_t>(n)},
        links(kind, topology, hello),
        squares(kDim, 97, 2, n),
        config(std::move(protocol_config)),
        requests(static_cast<std::size_t>(n)),
        hooks(static_cast<std::size_t>(n)),
        reports(static_cast<std::size_t>(n)),
        errors(static_cast<std::size_t>(n)) {}

  int size() const { return topology.graph.size(); }

  DriverSettings settings(int i) const {
    DriverSettings s;
    s.self = i;
    s.run = hello;
    s.iterations = config.iterations;
    s.startup_timeout_s = startup_timeout_s;
    s.peer_timeout_s = config.silence_timeout_s > 0 ? config.silence_timeout_s : 2.0;
    s.wait_for_start = wait_for_start;
    s.duration_s = 20;  // a regression that stalls the run fails the test instead of hanging it
    s.progress = wait_for_start ? &ready_lines[static_cast<std::size_t>(i)] : nullptr;
    return s;
  }

  // The gradient of the toy model on peer i's rows of iteration k, as VirtualNetwork's
  // LeastSquares computes it.
  ComputeThread::GradientFn gradient_of(int i) const {
    return [this, i](const consensus::StartGradient& request, std::vector<float> buffer) {
      const auto g =
          squares.gradient(request.params->values(), squares.batch_rows(i, request.iteration));
      training::GradientStep step;
      buffer.assign(g.begin(), g.end());
      step.result.gradient = std::move(buffer);
      return step;
    };
  }

  // Runs the drivers of `peers` (all when empty) to their ends, each on its own thread.
  void run(std::vector<int> peers = {}) {
    if (peers.empty()) {
      for (int i = 0; i < size(); ++i) peers.push_back(i);
    }
    std::vector<std::thread> threads;
    for (int i : peers) threads.emplace_back([this, i] { run_one(i); });
    for (auto& t : threads) t.join();
  }

  void run_one(int i) {
    const auto u = static_cast<std::size_t>(i);
    consensus::PeerProtocol protocol(i, topology.schedule, config,
                                     consensus::make_params(std::vector<float>(kDim, 0.0f)));
    transport::Link& link = links[i];
    ComputeThread compute(
        gradient_of(i), [](std::int64_t, double) { return 0.0; }, [&link] { link.wake(); });
    try {
      PeerDriver driver(settings(i), {link, protocol, compute, requests[u], hooks[u]});
      reports[u] = driver.run();
    } catch (const std::exception& e) {
      errors[u] = e.what();
    }
    const auto model = protocol.model()->values();
    reports[u].final_model.assign(model.begin(), model.end());
  }

  // The same peers in virtual time.
  std::vector<std::vector<float>> virtual_models() const {
    consensus::testing::LambdaDelays delays;
    LeastSquares gradients(kDim, 97, 2, size());
    simulation::VirtualNetwork network(
        consensus::testing::make_peers(topology.schedule, config, std::vector<float>(kDim, 0.0f)),
        delays, gradients);
    network.start();
    network.run();
    std::vector<std::vector<float>> out;
    for (int i = 0; i < size(); ++i) {
      const auto values = network.peer(i).model()->values();
      out.emplace_back(values.begin(), values.end());
    }
    return out;
  }

  topology::Topology topology;
  wire::HelloInfo hello;  // run id and peer count
  Links links;
  LeastSquares squares;
  consensus::ProtocolConfig config;
  double startup_timeout_s = 5;
  bool wait_for_start = false;
  std::vector<RunRequests> requests;
  std::vector<PeerHooks> hooks;
  std::vector<PeerReport> reports;
  std::vector<std::string> errors;
  mutable std::vector<std::ostringstream> ready_lines = std::vector<std::ostringstream>(16);
};

consensus::ProtocolConfig full(std::int64_t iterations) {
  consensus::ProtocolConfig config;
  config.iterations = iterations;
  config.optimizer.lr = 0.05;
  return config;
}

class PeerDriverOver : public ::testing::TestWithParam<LinkKind> {};

TEST_P(PeerDriverOver, FullPolicyEndsWithTheVirtualNetworksBits) {
  Neighbourhood hood(GetParam(), topology::TopologyKind::kRing, 5, full(60));
  hood.run();
  const auto expected = hood.virtual_models();
  for (int i = 0; i < hood.size(); ++i) {
    const PeerReport& r = hood.reports[static_cast<std::size_t>(i)];
    ASSERT_EQ(hood.errors[static_cast<std::size_t>(i)], "") << "peer " << i;
    EXPECT_EQ(r.iterations, 60) << "peer " << i;
    EXPECT_EQ(r.end, "iterations");
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.mean_awaited, 2.0) << "full awaits both ring neighbours";
    EXPECT_GE(r.messages_sent, 2u * 60u);
    EXPECT_TRUE(r.rejected.empty());
    ASSERT_EQ(r.departures.size(), 2u);
    for (const auto& d : r.departures) EXPECT_EQ(d.how, "bye") << "peer " << i;
    EXPECT_EQ(r.final_model, expected[static_cast<std::size_t>(i)]) << "peer " << i;
    EXPECT_NE(r.final_model, std::vector<float>(kDim, 0.0f)) << "the peers did train";
  }
}

TEST_P(PeerDriverOver, AStoppedPeerSaysByeAndItsNeighboursFinishWithoutIt) {
  Neighbourhood hood(GetParam(), topology::TopologyKind::kRing, 4, full(200));
  hood.hooks[0].on_iteration = [&](const consensus::IterationRecord& r, double) {
    if (r.iteration == 10) hood.requests[0].stop = true;
  };
  hood.run();
  const PeerReport& stopped = hood.reports[0];
  EXPECT_EQ(stopped.end, "signal");
  EXPECT_TRUE(stopped.stopped);
  EXPECT_LT(stopped.iterations, 200);
  for (int j : {1, 3}) {  // peer 0's neighbours
    const PeerReport& r = hood.reports[static_cast<std::size_t>(j)];
    EXPECT_EQ(r.end, "iterations") << "peer " << j;
    EXPECT_EQ(r.iterations, 200);
    const auto left = std::find_if(r.departures.begin(), r.departures.end(),
                                   [](const Departure& d) { return d.peer == 0; });
    ASSERT_NE(left, r.departures.end()) << "peer " << j << " did not record peer 0 leaving";
    EXPECT_EQ(left->how, "bye");
    EXPECT_LT(left->at_iteration, 200) << "noticed while iterating, not at the end";
  }
}

TEST_P(PeerDriverOver, TheHandshakeNamesTheNeighbourThatNeverAnswered) {
  Neighbourhood hood(GetParam(), topology::TopologyKind::kRing, 3, full(10));
  hood.startup_timeout_s = 0.3;
  hood.run({0, 1});  // peer 2's link exists, but nobody drives it
  for (int i : {0, 1}) {
    EXPECT_THAT(hood.errors[static_cast<std::size_t>(i)],
                HasSubstr("did not hear from 1 neighbour(s) within startup_timeout_ms = 300"));
    EXPECT_THAT(hood.errors[static_cast<std::size_t>(i)], HasSubstr("peer 2 at"));
  }
}

TEST_P(PeerDriverOver, PeersWaitForTheGoAfterSayingTheyAreReady) {
  Neighbourhood hood(GetParam(), topology::TopologyKind::kComplete, 3, full(20));
  hood.wait_for_start = true;
  const auto go = Clock::now() + std::chrono::milliseconds(100);
  std::thread launcher([&] {
    std::this_thread::sleep_until(go);
    for (auto& r : hood.requests) r.start = true;
  });
  hood.run();
  launcher.join();
  const double go_s = std::chrono::duration<double>(go.time_since_epoch()).count();
  for (int i = 0; i < 3; ++i) {
    const PeerReport& r = hood.reports[static_cast<std::size_t>(i)];
    EXPECT_EQ(r.iterations, 20);
    const std::string lines = hood.ready_lines[static_cast<std::size_t>(i)].str();
    EXPECT_TRUE(lines.starts_with(std::string(kReadyLine) + "\n")) << lines;
    EXPECT_THAT(lines, HasSubstr("@progress iteration=20 iterations=20")) << "the last line";
    EXPECT_GE(r.first_iteration_monotonic_s, go_s) << "peer " << i << " started early";
  }
}

// A peer told to go first sends its x(0) at once, to neighbours still waiting for their go:
// they must keep it for their iteration 0 (dropping it made full mix x_0(1) instead).
TEST_P(PeerDriverOver, AModelThatArrivesBeforeTheGoIsKept) {
  Neighbourhood hood(GetParam(), topology::TopologyKind::kRing, 4, full(30));
  hood.wait_for_start = true;
  std::thread launcher([&] {
    hood.requests[0].start = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its x(0) is on its way
    for (auto& r : hood.requests) r.start = true;
  });
  hood.run();
  launcher.join();
  const auto expected = hood.virtual_models();
  for (int i = 0; i < hood.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    EXPECT_EQ(hood.reports[u].end, "iterations") << "peer " << i;
    EXPECT_EQ(hood.reports[u].final_model, expected[u]) << "peer " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Links, PeerDriverOver,
                         ::testing::Values(LinkKind::kInProcess, LinkKind::kIpc, LinkKind::kTcp),
                         [](const auto& param_info) { return name_of(param_info.param); });

// A peer whose process dies says no BYE: its neighbours' protocols notice the silence
// (silence_timeout_s) and report it, and the run goes on without it. In process, where a
// test can make a peer vanish (system/peer_failure_test.cc kills a real one).
TEST(PeerDriver, ASilentPeerIsReportedByTheProtocolAndTheOthersFinish) {
  consensus::ProtocolConfig config = full(150);
  config.silence_timeout_s = 0.2;
  Neighbourhood hood(LinkKind::kInProcess, topology::TopologyKind::kRing, 4, config);
  hood.hooks[2].on_iteration = [&](const consensus::IterationRecord& r, double) {
    if (r.iteration == 5) hood.links.network().cut(2);
  };
  hood.run();
  for (int j : {1, 3}) {
    const PeerReport& r = hood.reports[static_cast<std::size_t>(j)];
    EXPECT_EQ(r.iterations, 150) << "peer " << j;
    int reported = 0;
    for (const Departure& d : r.departures) {
      if (d.peer == 2) {
        ++reported;
        EXPECT_EQ(d.how, "silent");
        EXPECT_LT(d.at_iteration, 150) << "noticed while iterating";
      }
      // Peer 0 may be reported silent too: it sends nothing while it waits for this peer,
      // which waits 0.2 s for peer 2. It comes back with its next model.
    }
    EXPECT_EQ(reported, 1) << "peer " << j << ": peer 2's departure, once";
  }
}

// Refused sends wait in the outbound queue; a newer model replaces a pending one, a BYE never.
TEST(OutboundQueue, NewestModelWinsAndControlMessagesAreKept) {
  transport::InProcessNetwork network(2, /*capacity=*/1);
  const wire::PeerId to_one[] = {1}, to_zero[] = {0};
  const wire::HelloInfo run{1, 2};
  transport::InProcessLink sender(network, wire::WirePeers(0, run, to_one), {1});
  transport::InProcessLink receiver(network, wire::WirePeers(1, run, to_zero), {0});
  OutboundQueue queue(sender);
  const auto model = [](std::int64_t tag) {
    auto params = consensus::make_params(std::vector<float>(3, static_cast<float>(tag)));
    return wire::encode_model(0, tag, params, params->values());
  };
  queue.send(1, Outbound::kModel, model(1));  // fills the mailbox
  queue.send(1, Outbound::kModel, model(2));  // refused: pending
  queue.send(1, Outbound::kControl, wire::encode_bye(0, 2));
  queue.send(1, Outbound::kModel, model(3));  // replaces model 2
  EXPECT_EQ(queue.superseded(), 1u);
  EXPECT_TRUE(queue.pending());
  std::vector<std::pair<wire::MessageType, std::int64_t>> got;
  for (int turn = 0; turn < 10 && got.size() < 3; ++turn) {
    if (auto r = receiver.receive(std::chrono::milliseconds(0))) {
      const auto& m = std::get<transport::ReceivedMessage>(*r);
      got.emplace_back(m.type(), m.iteration());
    }
    queue.flush();
  }
  using T = wire::MessageType;
  EXPECT_EQ(
      got, (std::vector<std::pair<T, std::int64_t>>{{T::kModel, 1}, {T::kBye, 2}, {T::kModel, 3}}));
  EXPECT_FALSE(queue.pending());
}

// Compressed differences are never replaced: 6 through a link that holds one all arrive, in
// order. A backlog of 256 MiB for a neighbour that takes none is dropped; later ones queue.
TEST(OutboundQueue, EveryDifferenceIsSentUntilTheNeighbourIsGivenUp) {
  transport::InProcessNetwork network(2, /*capacity=*/1);
  const wire::PeerId to_one[] = {1}, to_zero[] = {0};
  const wire::HelloInfo run{1, 2};
  transport::InProcessLink sender(network, wire::WirePeers(0, run, to_one), {1});
  transport::InProcessLink receiver(network, wire::WirePeers(1, run, to_zero), {0});
  OutboundQueue queue(sender);
  const auto difference = [](std::int64_t tag, std::uint32_t length) {
    compression::Compressed c;
    c.kind = compression::Kind::kFloat16;
    c.length = length;
    c.halves.assign(length, static_cast<std::uint16_t>(tag));
    return wire::encode_compressed_difference(0, tag, c);
  };
  for (std::int64_t tag = 1; tag <= 6; ++tag) {
    queue.send(1, Outbound::kCompressedDifference, difference(tag, 3));
  }
  EXPECT_EQ(queue.superseded(), 0u);
  std::vector<std::int64_t> tags;
  for (int turn = 0; turn < 20; ++turn) {
    if (auto r = receiver.receive(std::chrono::milliseconds(0))) {
      tags.push_back(std::get<transport::ReceivedMessage>(*r).iteration());
    }
    queue.flush();
  }
  EXPECT_EQ(tags, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  // The link takes one of 16 MiB, then 16 wait: 256 MiB. The next drops those 16 and waits
  // itself, with the one after it.
  const std::uint32_t big = 8u << 20;  // halves: 16 MiB
  for (std::int64_t tag = 7; tag <= 25; ++tag) {
    queue.send(1, Outbound::kCompressedDifference, difference(tag, big));
  }
  EXPECT_EQ(queue.dropped_differences(), 16u);
  tags.clear();
  for (int turn = 0; turn < 20; ++turn) {
    if (auto r = receiver.receive(std::chrono::milliseconds(0))) {
      tags.push_back(std::get<transport::ReceivedMessage>(*r).iteration());
    }
    queue.flush();
  }
  // The receiver sees 7, then a gap to 24: the gap its protocol parts this peer for.
  EXPECT_EQ(tags, (std::vector<std::int64_t>{7, 24, 25}));
  EXPECT_FALSE(queue.pending());
}

// The tags a receiver gets when 6 models go out through a link that holds one, with
// `models_kept` held per neighbour.
std::vector<std::int64_t> tags_delivered(std::size_t models_kept, std::uint64_t* superseded) {
  transport::InProcessNetwork network(2, /*capacity=*/1);
  const wire::PeerId to_one[] = {1}, to_zero[] = {0};
  const wire::HelloInfo run{1, 2};
  transport::InProcessLink sender(network, wire::WirePeers(0, run, to_one), {1});
  transport::InProcessLink receiver(network, wire::WirePeers(1, run, to_zero), {0});
  OutboundQueue queue(sender, models_kept);
  for (std::int64_t tag = 1; tag <= 6; ++tag) {
    auto params = consensus::make_params(std::vector<float>(3, static_cast<float>(tag)));
    queue.send(1, Outbound::kModel, wire::encode_model(0, tag, params, params->values()));
  }
  *superseded = queue.superseded();
  std::vector<std::int64_t> tags;
  for (int turn = 0; turn < 20; ++turn) {
    if (auto r = receiver.receive(std::chrono::milliseconds(0))) {
      tags.push_back(std::get<transport::ReceivedMessage>(*r).iteration());
    }
    queue.flush();
  }
  return tags;
}

// Push-sum keeps every model (each is mass that must arrive once); full keeps staleness + 2
// (the tag-k model its receiver mixes is never replaced, and a neighbour that is gone does
// not pile up models); the other policies the newest one.
TEST(OutboundQueue, KeepsAsManyModelsPerNeighbourAsTheProtocolNeeds) {
  std::uint64_t superseded = 0;
  EXPECT_EQ(tags_delivered(0, &superseded), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(superseded, 0u);
  EXPECT_EQ(tags_delivered(2, &superseded), (std::vector<std::int64_t>{1, 5, 6}));
  EXPECT_EQ(superseded, 3u);
  EXPECT_EQ(tags_delivered(1, &superseded), (std::vector<std::int64_t>{1, 6}));
  EXPECT_EQ(superseded, 4u);
  // What the protocol asks of its runtime.
  const auto schedule = std::make_shared<topology::StaticSchedule>(
      topology::Graph(2, {{0, 1}}), Eigen::MatrixXd::Constant(2, 2, 0.5).sparseView());
  const auto kept = [&](consensus::PolicyKind kind, int staleness, bool push_sum) {
    consensus::ProtocolConfig config;
    config.policy.kind = kind;
    config.staleness = staleness;
    config.push_sum = push_sum;
    return consensus::PeerProtocol(0, schedule, config, consensus::make_params({0.0f}))
        .models_kept_queued();
  };
  EXPECT_EQ(kept(consensus::PolicyKind::kFull, 0, false), 2u);
  EXPECT_EQ(kept(consensus::PolicyKind::kFull, 3, false), 5u);
  EXPECT_EQ(kept(consensus::PolicyKind::kFull, 1000, false), 8u);
  EXPECT_EQ(kept(consensus::PolicyKind::kAdaptive, 0, false), 1u);
}

}  // namespace
}  // namespace fastk::node::peer
