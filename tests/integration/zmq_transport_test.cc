// Real ZeroMQ transports over tcp://127.0.0.1 with kernel-chosen ports (and ipc:// paths), in
// one process.
#include "node/transport/zmq_transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "tests/support/raw_sender.h"
#include "tests/support/wire_frames.h"

namespace fastk::node::transport {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using wire::MessageType;
using wire::WireError;

constexpr std::size_t kMlpParameters = 101770;  // MLP 784-128-10
const wire::HelloInfo kRun{77, 3};
const std::string kAnyPort = "tcp://127.0.0.1:*";

std::shared_ptr<std::vector<float>> random_parameters(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  auto v = std::make_shared<std::vector<float>>(n);
  for (float& x : *v) x = normal(rng);
  return v;
}

// Polls every transport in turn until `want` good messages arrived in total (or 10 s pass:
// the test then fails on the count instead of hanging).
std::vector<std::vector<ReceivedMessage>> receive_all(std::vector<ZmqTransport*> transports,
                                                      std::size_t want) {
  std::vector<std::vector<ReceivedMessage>> got(transports.size());
  std::size_t total = 0;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (total < want && std::chrono::steady_clock::now() < give_up) {
    for (std::size_t t = 0; t < transports.size(); ++t) {
      if (auto r = transports[t]->receive(5ms)) {
        if (auto* m = std::get_if<ReceivedMessage>(&*r)) {
          got[t].push_back(std::move(*m));
          ++total;
        }
      }
    }
  }
  return got;
}

// Three peers, everyone each other's neighbour.
struct Triangle {
  std::vector<std::unique_ptr<ZmqTransport>> peers;
  static std::vector<wire::PeerId> others(wire::PeerId i) {
    std::vector<wire::PeerId> result;
    for (wire::PeerId j = 0; j < 3; ++j) {
      if (j != i) result.push_back(j);
    }
    return result;
  }
  Triangle() {
    for (wire::PeerId i = 0; i < 3; ++i) {
      peers.push_back(
          std::make_unique<ZmqTransport>(wire::WirePeers(i, kRun, others(i)), kAnyPort));
    }
    for (wire::PeerId i = 0; i < 3; ++i) {
      for (wire::PeerId j : others(i)) peers[i]->connect(j, peers[j]->endpoint());
    }
  }
  void send_to_others(wire::PeerId i, const wire::EncodedMessage& message) {
    for (wire::PeerId j : others(i)) EXPECT_EQ(peers[i]->send(j, message), SendStatus::kQueued);
  }
  std::vector<ZmqTransport*> all() { return {peers[0].get(), peers[1].get(), peers[2].get()}; }
};

TEST(ZmqTransport, ThreePeersExchangeHelloModelAndBye) {
  Triangle t;
  EXPECT_THAT(t.peers[0]->endpoint(), HasSubstr("tcp://127.0.0.1:"));
  for (wire::PeerId i = 0; i < 3; ++i) {
    t.send_to_others(i, wire::encode_hello(MessageType::kHello, i, 0, kRun));
  }
  auto hellos = receive_all(t.all(), 6);
  for (wire::PeerId i = 0; i < 3; ++i) {
    ASSERT_EQ(hellos[i].size(), 2u) << "peer " << i;
    for (const auto& m : hellos[i]) {
      EXPECT_EQ(m.type(), MessageType::kHello);
      EXPECT_NE(m.sender(), i);
      EXPECT_EQ(m.hello(), kRun);
    }
  }

  // Each peer sends an MLP-sized model, then lets go of its buffer at once: the transport
  // must keep the zero-copy payload alive until ZeroMQ has sent it.
  std::vector<std::vector<float>> sent;
  for (wire::PeerId i = 0; i < 3; ++i) {
    auto params = random_parameters(kMlpParameters, i);
    sent.push_back(*params);
    auto model = wire::encode_model(i, 5, params, *params);
    params.reset();
    t.send_to_others(i, model);
  }
  auto models = receive_all(t.all(), 6);
  for (wire::PeerId i = 0; i < 3; ++i) {
    ASSERT_EQ(models[i].size(), 2u) << "peer " << i;
    for (const auto& m : models[i]) {
      EXPECT_EQ(m.type(), MessageType::kModel);
      EXPECT_EQ(m.iteration(), 5);
      const auto& expected = sent[m.sender()];
      ASSERT_EQ(m.parameters().size(), expected.size());
      EXPECT_EQ(
          std::memcmp(m.parameters().data(), expected.data(), expected.size() * sizeof(float)), 0)
          << "parameters from peer " << m.sender() << " to peer " << i << " changed on the way";
    }
  }

  EXPECT_EQ(t.peers[2]->send(0, wire::encode_bye(2, 6)), SendStatus::kQueued);
  auto byes = receive_all({t.peers[0].get()}, 1);
  ASSERT_EQ(byes[0].size(), 1u);
  EXPECT_EQ(byes[0][0].type(), MessageType::kBye);
  EXPECT_EQ(byes[0][0].sender(), 2u);
  EXPECT_EQ(byes[0][0].iteration(), 6);

  const SendCounters c = t.peers[1]->send_totals();
  EXPECT_EQ(c.queued, 4u);
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(c.bytes_queued, 2 * (28 + 12) + 2 * (28 + kMlpParameters * 4));
  for (auto& p : t.peers) EXPECT_EQ(p->rejections().total(), 0u);
}

TEST(ZmqTransport, TinyModelsSurviveBeingMoved) {
  // ZeroMQ stores frames of a few bytes inside the message object itself, which moves.
  Triangle t;
  auto params = std::make_shared<std::vector<float>>(std::vector<float>{1.5f, -2.0f, 3.0f});
  t.send_to_others(0, wire::encode_model(0, 1, params, *params));
  auto got = receive_all({t.peers[1].get()}, 1);  // moves each message into a vector
  ASSERT_EQ(got[0].size(), 1u);
  std::vector<ReceivedMessage> moved_again;
  moved_again.push_back(std::move(got[0][0]));
  const auto p = moved_again[0].parameters();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(std::vector<float>(p.begin(), p.end()), *params);
}

TEST(ZmqTransport, ReceiveTimesOutEmptyWhenNothingArrives) {
  const wire::PeerId none[] = {1};
  ZmqTransport lonely(wire::WirePeers(0, kRun, none), kAnyPort);
  EXPECT_FALSE(lonely.receive(20ms));
}

using testing::RawSender;

TEST(ZmqTransport, MalformedMessagesAreDroppedAndCountedWhileGoodOnesArrive) {
  std::vector<std::string> log;
  TransportOptions options;
  options.log = [&](std::string_view line) { log.emplace_back(line); };
  const wire::HelloInfo run{77, 8};
  const wire::PeerId neighbours[] = {1, 7};
  ZmqTransport peer(wire::WirePeers(0, run, neighbours), kAnyPort, options);
  RawSender raw(peer.endpoint());

  auto params = random_parameters(1000, 9);
  const testing::Frames good = testing::to_frames(wire::encode_model(1, 4, params, *params));
  testing::Frames truncated = good;
  truncated[0].resize(12);
  testing::Frames corrupted = good;
  corrupted[1][100] ^= std::byte{1};
  testing::Frames version = good;
  version[0][wire::kVersionOffset] = std::byte{9};
  testing::Frames too_many = good;
  too_many.push_back(good[1]);
  too_many.push_back(good[1]);

  raw.send({testing::Frame(64, std::byte{0x5A})});  // garbage, twice: counted twice, logged once
  raw.send({testing::Frame(64, std::byte{0x5A})});
  raw.send({testing::Frame(3, std::byte{0x00})});
  raw.send(truncated);
  raw.send(corrupted);
  raw.send(version);
  raw.send(too_many);
  raw.send(testing::to_frames(wire::encode_bye(9, 1)));  // no peer 9 in a run of 8
  raw.send(testing::to_frames(wire::encode_bye(3, 1)));  // peer 3 is not a neighbour of 0
  raw.send(testing::to_frames(wire::encode_hello(MessageType::kHello, 7, 0, {78, 8})));
  raw.send(good);

  std::optional<ReceivedMessage> model;
  int rejected = 0;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!model && std::chrono::steady_clock::now() < give_up) {
    if (auto r = peer.receive(10ms)) {
      if (auto* m = std::get_if<ReceivedMessage>(&*r)) {
        model.emplace(std::move(*m));
      } else {
        ++rejected;
      }
    }
  }
  ASSERT_TRUE(model) << "the good message after the bad ones never arrived";
  EXPECT_EQ(model->sender(), 1u);
  ASSERT_EQ(model->parameters().size(), params->size());
  EXPECT_EQ(std::memcmp(model->parameters().data(), params->data(), params->size() * 4), 0);

  // PUSH/PULL keeps one sender's messages in order, so all bad ones came first.
  EXPECT_EQ(rejected, 10);
  const wire::RejectionCounter& r = peer.rejections();
  EXPECT_EQ(r.count(WireError::kBadMagic), 2u);
  EXPECT_EQ(r.count(WireError::kBadHeader), 2u);
  EXPECT_EQ(r.count(WireError::kBadChecksum), 1u);
  EXPECT_EQ(r.count(WireError::kUnsupportedVersion), 1u);
  EXPECT_EQ(r.count(WireError::kBadFrameCount), 1u);
  EXPECT_EQ(r.count(WireError::kUnknownSender), 1u);
  EXPECT_EQ(r.count(WireError::kNotNeighbour), 1u);
  EXPECT_EQ(r.count(WireError::kWrongRun), 1u);
  EXPECT_EQ(r.total(), 10u);
  EXPECT_EQ(log.size(), 8u) << "one line per cause";
  EXPECT_THAT(log[0], HasSubstr("bad magic"));
}

// A loopback endpoint nobody listens on: bind a socket to get a free port, then close it.
std::string unused_endpoint() {
  zmq::context_t context;
  zmq::socket_t probe(context, zmq::socket_type::pull);
  probe.set(zmq::sockopt::linger, 0);
  probe.bind(kAnyPort);
  return probe.get(zmq::sockopt::last_endpoint);
}

TEST(ZmqTransport, AMessageSentBeforeTheNeighbourStartsArrivesWhenItDoes) {
  // Peers start in any order: peer 0 says hello to peer 1 before peer 1 exists.
  const std::string endpoint_1 = unused_endpoint();
  const wire::PeerId from_1[] = {1};
  ZmqTransport peer_0(wire::WirePeers(0, kRun, from_1), kAnyPort);
  peer_0.connect(1, endpoint_1);
  EXPECT_EQ(peer_0.send(1, wire::encode_hello(MessageType::kHello, 0, 0, kRun)),
            SendStatus::kQueued);

  const wire::PeerId from_0[] = {0};
  ZmqTransport peer_1(wire::WirePeers(1, kRun, from_0), endpoint_1);
  auto got = receive_all({&peer_1}, 1);
  ASSERT_EQ(got[0].size(), 1u) << "the early HELLO was lost";
  EXPECT_EQ(got[0][0].type(), MessageType::kHello);
  EXPECT_EQ(got[0][0].sender(), 0u);
}

TEST(ZmqTransport, SendingToAPeerThatIsNotRunningNeverBlocks) {
  const std::string dead_endpoint = unused_endpoint();
  auto params = random_parameters(kMlpParameters, 3);
  {
    const wire::PeerId neighbours[] = {1};
    TransportOptions options;
    options.send_high_water_mark = 4;
    ZmqTransport peer(wire::WirePeers(0, kRun, neighbours), kAnyPort, options);
    peer.connect(1, dead_endpoint);
    const auto model = wire::encode_model(0, 1, params, *params);
    int dropped = 0;
    for (int i = 0; i < 50; ++i) {
      if (peer.send(1, model) == SendStatus::kDropped) ++dropped;
    }
    // Reaching this line at all is the point; the queue holds a few, the rest are counted.
    const SendCounters c = peer.send_counters(1);
    EXPECT_EQ(c.dropped, static_cast<std::uint64_t>(dropped));
    EXPECT_EQ(c.queued + c.dropped, 50u);
    EXPECT_GE(c.dropped, 40u);
    EXPECT_GT(params.use_count(), 1) << "queued messages share the caller's buffer";
  }
  // Closing with linger 0 discards the queue and releases every reference to the buffer.
  EXPECT_EQ(params.use_count(), 1);
}

TEST(ZmqTransport, AnotherThreadCanCutAWaitShort) {
  const wire::PeerId neighbours[] = {1};
  ZmqTransport peer(wire::WirePeers(0, kRun, neighbours), kAnyPort);
  std::thread compute([&peer] {
    std::this_thread::sleep_for(20ms);  // "computing a gradient"
    peer.wake();
  });
  // Without the wake-up this would wait a minute and still return empty, but with
  // wakeups() == 0.
  EXPECT_FALSE(peer.receive(60s));
  compute.join();
  EXPECT_EQ(peer.wakeups(), 1u);
  peer.wake();  // a wake-up while nobody waits is kept for the next receive()
  peer.wake();  // and several collapse into one
  EXPECT_FALSE(peer.receive(60s));
  EXPECT_EQ(peer.wakeups(), 2u);
}

TEST(ZmqTransport, MisuseIsReportedClearly) {
  const wire::PeerId neighbours[] = {1};
  ZmqTransport peer(wire::WirePeers(0, kRun, neighbours), kAnyPort);
  EXPECT_THROW((void)peer.send(1, wire::encode_bye(0, 0)), std::invalid_argument);
  peer.connect(1, "tcp://127.0.0.1:1");
  EXPECT_THROW(peer.connect(1, "tcp://127.0.0.1:2"), std::invalid_argument);
  EXPECT_THROW(peer.connect(2, "nonsense"), std::runtime_error);
  try {
    ZmqTransport twice(wire::WirePeers(0, kRun, neighbours), peer.endpoint());
    FAIL() << "bound an endpoint in use";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot bind the receive socket to '" + peer.endpoint()));
  }
}

// Local runs use Unix-domain sockets: a model crosses one intact, and a second transport on
// a path in use fails to bind as it would on a TCP port in use (ZeroMQ alone would remove
// the first one's socket file and take the path over).
TEST(ZmqTransport, IpcEndpointsCarryModelsAndRefuseAPathInUse) {
  const std::string path = "ipc:///tmp/fastk-transport-test-" + std::to_string(::getpid());
  const wire::PeerId to_one[] = {1}, to_zero[] = {0};
  ZmqTransport zero(wire::WirePeers(0, kRun, to_one), path + "-0");
  ZmqTransport one(wire::WirePeers(1, kRun, to_zero), path + "-1");
  zero.connect(1, one.endpoint());
  auto params = random_parameters(kMlpParameters, 3);
  ASSERT_EQ(zero.send(1, wire::encode_model(0, 4, params, *params)), SendStatus::kQueued);
  auto got = receive_all({&one}, 1);
  ASSERT_EQ(got[0].size(), 1u);
  ASSERT_EQ(got[0][0].parameters().size(), params->size());
  EXPECT_EQ(
      std::memcmp(got[0][0].parameters().data(), params->data(), params->size() * sizeof(float)),
      0);
  try {
    ZmqTransport twice(wire::WirePeers(1, kRun, to_zero), path + "-1");
    FAIL() << "bound an ipc path in use";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot bind the receive socket to '" + path + "-1'"));
  }
}

}  // namespace
}  // namespace fastk::node::transport
