// Bad frames sent by a foreign program to a live `fastk node` over TCP: the peer drops and
// counts them by cause (summary.json's rejected_frames for frames the wire decoder refuses,
// dropped_by_cause for well-formed messages the protocol cannot use) and trains on to the end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "node/metrics/output_files.h"
#include "node/wire/model_slot_payload.h"
#include "tests/support/raw_sender.h"
#include "tests/support/system_support.h"
#include "tests/support/wire_frames.h"

namespace fastk::systest {
namespace {

using fastk::testing::Frame;
using fastk::testing::Frames;
namespace wire = node::wire;

// A well-formed MODEL of `sender` (the peers' model size does not matter: the checks that
// reject these frames come before the payload is used).
Frames model_from(wire::PeerId sender,
                  const std::vector<float>& params = std::vector<float>(16, 0.5f)) {
  return fastk::testing::to_frames(wire::encode_model(sender, 3, nullptr, params));
}

// The MLP 8-8-3 of the tiny experiment: 8 * 8 + 8 + 8 * 3 + 3 values (checked below).
constexpr std::uint64_t kFloats = 99;

// Called right after the frames went out to peer 0: every peer ends well, and the frames
// were sent while peer 0 was still training.
void expect_all_finish_after_sending(const std::vector<std::unique_ptr<FastkProcess>>& peers,
                                     const TinyExperiment& e) {
  const std::int64_t iteration_when_sent = peers[0]->progress()->iteration;
  for (int i = 0; i < e.peers; ++i) {
    const auto status = peers[i]->wait(Seconds(120));
    ASSERT_TRUE(status.has_value()) << "peer " << i << " hangs:\n" << peers[i]->output();
    EXPECT_TRUE(status->ok()) << peers[i]->output();
  }
  ASSERT_LT(iteration_when_sent, e.iterations) << "the frames were sent after the run";
}

TEST(MalformedFrames, ALivePeerDropsAndCountsThemByCauseAndTrainsOn) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  // Peer 0's neighbours are 1 and 3; peer 2 is of the run but not a neighbour.
  // Over loopback TCP (local runs default to Unix-domain sockets), so that real peers are
  // also tested over TCP end to end.
  TinyExperiment e = tiny_experiment(4, 3000);
  e.local_transport = "tcp";
  // Plain TCP, so that the frames reach the decoder (with CURVE, the default over TCP, the
  // handshake refuses them first: forged_frames_test.cc); peer 0 warns once that it is plain.
  e.extra = "[security]\ncurve = \"off\"\n";
  const auto config = write_config(dir, e);
  const auto run = run_dir(dir);
  auto peers = start_peers(config, run, e.peers);
  ASSERT_TRUE(peers[0]->wait_for_iteration(20, Seconds(60))) << peers[0]->output();

  Frames bad_magic = model_from(1);
  bad_magic[0][0] = std::byte{'X'};
  fastk::testing::reseal(bad_magic);
  Frames bad_checksum = model_from(1);
  bad_checksum[1][5] ^= std::byte{0x40};  // a flipped bit in the payload
  Frames bad_version = model_from(1);
  bad_version[0][wire::kVersionOffset] = std::byte{9};
  fastk::testing::reseal(bad_version);
  Frames unknown_sender = model_from(77);  // a run of 4 peers
  Frames not_neighbour = model_from(2);
  // Well-formed MODELs of a neighbour that the protocol cannot use: of another model size,
  // and of this run's size with a NaN (mixed in, it would make every model of the run NaN).
  Frames wrong_size = model_from(1);
  std::vector<float> poisoned(kFloats, 0.25f);
  poisoned[40] = std::numeric_limits<float>::quiet_NaN();
  Frames nan_model = model_from(1, poisoned);

  {
    // Closing waits (linger) until the queued frames went out.
    fastk::testing::RawSender foreign("tcp://127.0.0.1:" + std::to_string(e.base_port),
                                      std::chrono::milliseconds(5000));
    foreign.send({Frame{std::byte{0xde}, std::byte{0xad}}});  // garbage: too short a header
    foreign.send({Frame(200, std::byte{0x5a})});              // garbage: no magic
    foreign.send({Frame(3, std::byte{0})});
    foreign.send(bad_magic);
    foreign.send(bad_checksum);
    foreign.send(bad_version);
    foreign.send(unknown_sender);
    foreign.send(not_neighbour);
    foreign.send(not_neighbour);
    foreign.send(wrong_size);
    foreign.send(nan_model);
  }
  ASSERT_NO_FATAL_FAILURE(expect_all_finish_after_sending(peers, e));
  const auto summary = read_json(peer_dir(run, 0) / "summary.json");
  EXPECT_EQ(summary.value("finished", false), true);
  EXPECT_EQ(summary.value("iterations", 0), e.iterations);
  const std::map<std::string, int> expected = {
      {"bad header", 2},          {"bad magic", 2},      {"bad checksum", 1},
      {"unsupported version", 1}, {"unknown sender", 1}, {"sender not a neighbour", 2}};
  const auto rejected = summary["rejected_frames"].get<std::map<std::string, int>>();
  EXPECT_EQ(rejected, expected) << summary.dump(2);
  const std::map<std::string, int> dropped = {{"non-finite values", 1}, {"wrong model size", 1}};
  const auto dropped_by_cause = summary["dropped_by_cause"].get<std::map<std::string, int>>();
  EXPECT_EQ(dropped_by_cause, dropped);
  EXPECT_EQ(summary.value("dropped_messages", 0), 2);
  const auto final_model = node::metrics::read_model(peer_dir(run, 0) / "model-final.f32", kFloats);
  ASSERT_TRUE(final_model.has_value());
  for (float v : *final_model) ASSERT_TRUE(std::isfinite(v)) << "the NaN was mixed in";
  // The neighbours never saw a bad frame.
  EXPECT_TRUE(read_json(peer_dir(run, 1) / "summary.json")["rejected_frames"].empty());
  EXPECT_THAT(peers[0]->output(), ::testing::HasSubstr("talk plain TCP, which any user of this"));
  EXPECT_THAT(peers[1]->output(), ::testing::Not(::testing::HasSubstr("plain TCP")));
}

// Over shared memory (the default for local runs), a SHARED_MODEL only names a slot of the
// sender's region: a reference to a slot or model size that does not exist is dropped and
// counted, one whose generation is not (or no longer) in the slot counts as lapped, and
// training goes on either way.
TEST(MalformedFrames, BadSharedModelReferencesAreDroppedAndCounted) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 3000);
  ASSERT_EQ(e.local_transport, "shm");
  const auto config = write_config(dir, e);
  const auto run = run_dir(dir);
  auto peers = start_peers(config, run, e.peers);
  ASSERT_TRUE(peers[0]->wait_for_iteration(20, Seconds(60))) << peers[0]->output();

  const auto shared = [](wire::ModelSlotRef ref) {
    return fastk::testing::to_frames(wire::encode_shared_model(1, 3, ref, nullptr));
  };
  {
    fastk::testing::RawSender foreign(local_endpoint(e.base_port), std::chrono::milliseconds(5000));
    foreign.send(shared({1000, 1, kFloats}));                    // no such slot
    foreign.send(shared({0, 1, kFloats + 1}));                   // not this run's model size
    foreign.send(shared({0, std::uint64_t{1} << 60, kFloats}));  // never published
    // An averaging reference to no slot: dropped, and logged by its own type.
    foreign.send(fastk::testing::to_frames(wire::encode_shared_model(
        1, 3, {1000, 1, kFloats}, nullptr, wire::MessageType::kSharedAverageRequest)));
  }
  ASSERT_NO_FATAL_FAILURE(expect_all_finish_after_sending(peers, e));
  EXPECT_EQ(std::filesystem::file_size(peer_dir(run, 0) / "model-final.f32"),
            kFloats * sizeof(float));
  const auto summary = read_json(peer_dir(run, 0) / "summary.json");
  EXPECT_EQ(summary.value("finished", false), true);
  EXPECT_EQ(summary.value("iterations", 0), e.iterations);
  const std::map<std::string, int> expected = {{"bad shared model", 3}};
  const auto rejected = summary["rejected_frames"].get<std::map<std::string, int>>();
  EXPECT_EQ(rejected, expected) << summary.dump(2);
  EXPECT_GE(summary.value("shared_models_lapped", 0), 1);
  EXPECT_THAT(peers[0]->output(), ::testing::HasSubstr("dropped a SHARED_MODEL from peer 1"));
  EXPECT_THAT(peers[0]->output(),
              ::testing::HasSubstr("dropped a SHARED_AVERAGE_REQUEST from peer 1"));
}

}  // namespace
}  // namespace fastk::systest
