// Encrypted, authenticated links (ZeroMQ CURVE with the peers' keys; docs/security.md) between
// real transports in one process: neighbours with the run's keys talk as over plain links;
// a sender without encryption or with a key of its own reaches nothing, and is counted; a
// neighbour cannot pass its frames off as another peer's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "node/transport/curve_keys.h"
#include "node/transport/zmq_transport.h"
#include "tests/support/raw_sender.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wire_frames.h"

namespace fastk::node::transport {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using wire::PeerId;
using wire::WireError;

const wire::HelloInfo kRun{91, 3};
const std::vector<float> kModel = {0.5f, -2.0f, 8.0f};

// Peer 0 hears from 1 and 2 (and sends to both), over CURVE, with the keys of a folder that
// `fastk keys` would write.
struct KeyedPeers {
  std::filesystem::path keys = testutil::fresh_test_dir("fastk_curve") / "keys";
  std::vector<std::unique_ptr<ZmqTransport>> peers;

  explicit KeyedPeers(const std::string& bind = "tcp://127.0.0.1:*") {
    write_key_folder(keys, 3);
    for (PeerId i = 0; i < 3; ++i) {
      const std::vector<PeerId> others =
          i == 0 ? std::vector<PeerId>{1, 2} : std::vector<PeerId>{0};
      TransportOptions options;
      options.curve = read_peer_keys(keys, i, others);
      const std::string endpoint =
          bind.starts_with("ipc://") ? bind + "-" + std::to_string(i) : bind;
      peers.push_back(std::make_unique<ZmqTransport>(wire::WirePeers(i, kRun, others), endpoint,
                                                     std::move(options)));
    }
    for (PeerId j : {1, 2}) {
      peers[0]->connect(j, peers[j]->endpoint());
      peers[j]->connect(0, peers[0]->endpoint());
    }
  }
  CurveKeys keys_of(PeerId i) const { return read_peer_keys(keys, i, std::vector<PeerId>{0}); }
};

// What a peer received within `wait` (or until `enough` messages came): good messages, and
// rejections.
struct Inbox {
  std::vector<ReceivedMessage> good;
  std::vector<wire::Rejection> bad;
};
Inbox receive_for(ZmqTransport& t, std::chrono::milliseconds wait, std::size_t enough = 1000) {
  Inbox in;
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until && in.good.size() + in.bad.size() < enough) {
    if (auto r = t.receive(10ms)) {
      if (auto* m = std::get_if<ReceivedMessage>(&*r)) in.good.push_back(std::move(*m));
      if (auto* b = std::get_if<wire::Rejection>(&*r)) in.bad.push_back(*b);
    }
  }
  return in;
}

void expect_neighbours_talk(KeyedPeers& run) {
  ASSERT_EQ(run.peers[1]->send(0, wire::encode_model(1, 4, nullptr, kModel)), SendStatus::kQueued);
  ASSERT_EQ(run.peers[0]->send(2, wire::encode_bye(0, 9)), SendStatus::kQueued);
  const Inbox at0 = receive_for(*run.peers[0], 5000ms, 1);
  ASSERT_EQ(at0.good.size(), 1u);
  EXPECT_EQ(at0.good[0].sender(), 1u);
  EXPECT_THAT(at0.good[0].parameters(), ::testing::ElementsAreArray(kModel));
  const Inbox at2 = receive_for(*run.peers[2], 5000ms, 1);
  ASSERT_EQ(at2.good.size(), 1u);
  EXPECT_EQ(at2.good[0].type(), wire::MessageType::kBye);
}

TEST(CurveLinks, NeighboursWithTheRunsKeysTalkOverTcpAndUnixSockets) {
  KeyedPeers tcp;
  expect_neighbours_talk(tcp);
  KeyedPeers ipc("ipc://" + (testutil::fresh_test_dir("fastk_curve") / "sock").string());
  expect_neighbours_talk(ipc);
  EXPECT_TRUE(tcp.peers[0]->refused_connections().empty());
}

// The forgeries of issue 15: a MODEL full of NaN and one of 1e30 tagged with a late
// iteration, each claiming to come from neighbour 1, sent without encryption and with a key
// the run does not know. Nothing reaches peer 0; both attempts are counted; peer 1's own
// model still does.
TEST(CurveLinks, ASenderWithoutTheRunsKeysReachesNothingAndIsCounted) {
  KeyedPeers run;
  std::vector<float> nan(kModel.size(), std::nanf("")), huge(kModel.size(), 1e30f);
  const auto forged_nan = testing::to_frames(wire::encode_model(1, 0, nullptr, nan));
  const auto forged_huge = testing::to_frames(wire::encode_model(1, 999, nullptr, huge));
  const CurveKeyPair stranger = make_key_pair();
  const std::string server = run.keys_of(0).own.public_key;
  const auto refused = [&](const char* cause) {
    const auto counts = run.peers[0]->refused_connections();
    return counts.count(cause) ? counts.at(cause) : 0;
  };
  {
    // Each forged message is queued at once, while its connection is still in its handshake.
    // libzmq ends a connection for good when its handshake fails, and a send after that
    // finds nowhere to queue: so try_send, whose failure (the handshake already refused)
    // is as good an outcome as a success.
    testing::RawSender plain(run.peers[0]->endpoint(), 500ms);
    (void)plain.try_send(forged_nan);
    testing::RawSender keyed(
        run.peers[0]->endpoint(), 500ms,
        testing::CurveClient{server, stranger.public_key, stranger.secret_key});
    (void)keyed.try_send(forged_huge);
    // Until both handshakes were refused, at most 10 s.
    Inbox in;
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while ((refused("unknown key") == 0 || refused("bad handshake") == 0) &&
           std::chrono::steady_clock::now() < give_up) {
      Inbox more = receive_for(*run.peers[0], 50ms);
      for (auto& m : more.good) in.good.push_back(std::move(m));
      in.bad.insert(in.bad.end(), more.bad.begin(), more.bad.end());
    }
    EXPECT_TRUE(in.good.empty()) << "a forged frame got through";
    EXPECT_TRUE(in.bad.empty()) << "a forged frame was decoded at all";
  }
  std::string counts;
  for (const auto& [cause, n] : run.peers[0]->refused_connections()) {
    counts += cause + ": " + std::to_string(n) + "; ";
  }
  EXPECT_GE(refused("unknown key"), 1u) << counts;
  EXPECT_GE(refused("bad handshake"), 1u) << counts;
  expect_neighbours_talk(run);
}

// Peer 2 holds a key the run knows, but may not speak for peer 1.
TEST(CurveLinks, ANeighbourCannotSendInAnotherPeersName) {
  KeyedPeers run;
  const CurveKeys peer2 = run.keys_of(2);
  testing::RawSender as_peer2(run.peers[0]->endpoint(), 500ms,
                              testing::CurveClient{run.keys_of(0).own.public_key,
                                                   peer2.own.public_key, peer2.own.secret_key});
  as_peer2.send(testing::to_frames(wire::encode_bye(1, 3)));
  as_peer2.send(testing::to_frames(wire::encode_bye(2, 3)));
  const Inbox in = receive_for(*run.peers[0], 5000ms, 2);
  ASSERT_EQ(in.bad.size(), 1u);
  EXPECT_EQ(in.bad[0].cause, WireError::kNotAuthenticated);
  EXPECT_THAT(in.bad[0].detail, HasSubstr("connection of peer 2's key names peer 1"));
  ASSERT_EQ(in.good.size(), 1u);
  EXPECT_EQ(in.good[0].sender(), 2u);
  EXPECT_EQ(run.peers[0]->rejections().count(WireError::kNotAuthenticated), 1u);
}

TEST(CurveKeysFolder, BadKeyFilesAreNamedWithWhatIsWrong) {
  const auto dir = testutil::fresh_test_dir("fastk_curve");
  const auto keys = dir / "keys";
  write_key_folder(keys, 2);
  struct stat st {};
  ASSERT_EQ(::stat(keys.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(secret_key_file(keys, 1).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto message = [&](auto&& call) {
    try {
      call();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<PeerId> one = {1};
  EXPECT_THAT(message([&] { write_key_folder(keys, 2); }), HasSubstr("cannot create"));
  EXPECT_THAT(message([&] { read_peer_keys(keys, 0, std::vector<PeerId>{5}); }),
              HasSubstr("no public key for peer 5"));
  EXPECT_THAT(message([&] { read_peer_keys(dir / "nowhere", 0, one); }), HasSubstr("fastk keys"));
  ::chmod(secret_key_file(keys, 0).c_str(), 0644);
  EXPECT_THAT(message([&] { read_peer_keys(keys, 0, one); }), HasSubstr("chmod 600"));
  ::chmod(secret_key_file(keys, 0).c_str(), 0600);
  // Whoever may change public-keys or the folder may swap a neighbour's key for their own.
  ::chmod(public_keys_file(keys).c_str(), 0666);
  EXPECT_THAT(message([&] { read_peer_keys(keys, 0, one); }), HasSubstr("chmod 644"));
  ::chmod(public_keys_file(keys).c_str(), 0644);
  ::chmod(keys.c_str(), 0777);
  EXPECT_THAT(message([&] { read_peer_keys(keys, 0, one); }), HasSubstr("writable by nobody"));
  ::chmod(keys.c_str(), 0700);
  // Peer 0's secret with another run's public keys.
  const auto other = dir / "other";
  write_key_folder(other, 2);
  std::filesystem::copy_file(public_keys_file(other), public_keys_file(keys),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_THAT(message([&] { read_peer_keys(keys, 0, one); }), HasSubstr("does not match"));
  std::ofstream(public_keys_file(keys)) << "0 not-a-key\n";
  EXPECT_THAT(message([&] { read_peer_keys(keys, 0, one); }), HasSubstr("line 1"));
}

}  // namespace
}  // namespace fastk::node::transport
