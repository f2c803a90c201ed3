// A keyless sender, local or remote, changes nothing in a run (docs/security.md): while a
// `fastk run` trains under policy full, a foreign program floods peer 0 with the forgeries
// that used to poison a run (a MODEL full of NaN, and one of 1e30 tagged with the last
// iteration, each claiming to come from neighbour 1), plain and with a CURVE key of its own.
// The run ends ok with `fastk sim`'s bits, and peer 0 counts the refused connections. Over
// Unix-domain sockets without CURVE (local runs' default), another user cannot even connect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "tests/support/forger.h"
#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

constexpr std::uint64_t kFloats = 99;  // the tiny experiment's MLP 8-8-3

class ForgedFrames : public ::testing::TestWithParam<std::string> {};

// Local Unix-socket runs leave CURVE off by default (their folder is the user's own,
// docs/security.md): on here, with keys from `fastk keys` so that the forger can know peer 0's
// public key (public keys are public) and its handshake reaches the gate.
std::string keys_of_the_run(const std::filesystem::path& dir, int peers) {
  const auto keys = dir / "keys";
  node::transport::write_key_folder(keys, peers);
  return "[security]\ncurve = \"on\"\nkeys = \"" + keys.string() + "\"\n";
}

std::string public_key_of(const std::filesystem::path& keys, int peer) {
  std::ifstream in(node::transport::public_keys_file(keys));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    int id = -1;
    std::string key;
    if (fields >> id >> key && id == peer) return key;
  }
  return "";
}

// Runs `e` with a forger at peer 0 (given peer 0's public key when known) and checks that
// nothing it sent got in: the run ends ok with `fastk sim`'s bits (a forged BYE taken would
// have changed what peer 0 waits for), and peer 0 counts refused connections of `cause`.
void expect_the_forger_changes_nothing(const std::filesystem::path& dir, const TinyExperiment& e,
                                       const std::string& server_key, const std::string& cause) {
  const auto config = write_config(dir, e);
  const std::string endpoint = e.local_transport == "tcp"
                                   ? "tcp://127.0.0.1:" + std::to_string(e.base_port)
                                   : local_endpoint(e.base_port);
  FastkProcess real({"run", config.string(), "--no-plots"});
  std::optional<Forger> forger(std::in_place, endpoint, kFloats, e.iterations - 1, server_key);
  const auto status = real.wait(Seconds(120));
  const std::string forger_saw = forger->stop();
  forger.reset();
  ASSERT_TRUE(status.has_value()) << real.output();
  ASSERT_TRUE(status->ok()) << real.output();
  EXPECT_THAT(real.output(), ::testing::Not(::testing::HasSubstr("plain TCP")));
  const auto real_run = dir / "real";
  std::filesystem::rename(run_dir(dir), real_run);

  const auto summary = read_json(peer_dir(real_run, 0) / "summary.json");
  EXPECT_EQ(summary["links"], "curve");
  EXPECT_GE(refused_connections(summary, cause), 1u)
      << "the forger never reached peer 0 while it ran (" << forger_saw << "): " << summary.dump(2);
  EXPECT_TRUE(summary["rejected_frames"].empty()) << "a forged frame got past the handshake";
  EXPECT_TRUE(summary["dropped_by_cause"].empty()) << "a forged frame reached the protocol";

  FastkProcess sim({"sim", config.string(), "--quiet", "--no-plots"});
  const auto sim_status = sim.wait(Seconds(120));
  ASSERT_TRUE(sim_status && sim_status->ok()) << sim.output();
  for (int i = 0; i < e.peers; ++i) expect_simulations_model(real_run, sim_dir(dir), i);
}

TEST_P(ForgedFrames, AKeylessSenderChangesNothingAndIsCounted) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 15000, "full");  // about 2 s: long enough to be hit
  e.local_transport = GetParam();
  e.extra = keys_of_the_run(dir, e.peers);
  e.peer_timeout_ms = 30000;  // exactness needs no neighbour given up on a loaded machine
  expect_the_forger_changes_nothing(dir, e, public_key_of(dir / "keys", 0), "unknown key");
}

// The probes, on a local run over loopback TCP with [security] left at its default:
// `fastk run` makes keys for the launch (any user of the machine can reach a loopback port),
// so the forger's MODEL of 1e30 with the last tag and its BYE "from peer 1" are refused at
// the handshake (it cannot know the run's keys: it guesses a server key).
TEST(ForgedFrames, ADefaultLocalTcpRunIsEncryptedAndRefusesTheProbes) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 15000, "full");
  e.local_transport = "tcp";
  e.peer_timeout_ms = 30000;
  expect_the_forger_changes_nothing(dir, e, "", "bad handshake");
}

// Another user on the machine tries to connect to peer 0's socket while a local run (Unix
// sockets, models in shared memory, no CURVE: the default) trains: permission denied, since
// the socket's folder is the run's user's own (mode 0700). The run ends with the sim's bits.
TEST(LocalSockets, AnotherUserCannotConnectToALocalRunsPeers) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 15000, "full");
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir, e);
  const std::string socket = local_endpoint(e.base_port).substr(std::string("ipc://").size());
  // Tries for up to 10 s (the run binds during it); prints what connect() said last.
  const std::string attempt =
      "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '"
      "import socket, time, sys\n"
      "said = \"no socket\"\n"
      "for _ in range(500):\n"
      "    s = socket.socket(socket.AF_UNIX)\n"
      "    try:\n"
      "        s.connect(sys.argv[1]); print(\"connected\"); sys.exit(1)\n"
      "    except PermissionError: print(\"permission denied\"); sys.exit(0)\n"
      "    except OSError as e: said = str(e)\n"
      "    time.sleep(0.02)\n"
      "print(said); sys.exit(2)' " +
      socket + " > " + (dir / "attempt.txt").string() + " 2>&1";

  FastkProcess real({"run", config.string(), "--no-plots"});
  // Only root can try as another user; any user can check what keeps the others out: the
  // socket folder is this user's, with mode 0700.
  const bool as_nobody = ::geteuid() == 0;
  const int attempted = as_nobody ? std::system(attempt.c_str()) : 0;
  const auto status = real.wait(Seconds(120));
  ASSERT_TRUE(status && status->ok()) << real.output();
  EXPECT_EQ(attempted, 0) << read_bytes(dir / "attempt.txt");  // 0 when not tried
  struct stat folder {};
  ASSERT_EQ(::stat(node::ipc_directory().c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 0777, 0700u);
  EXPECT_EQ(folder.st_uid, ::geteuid());
  const auto real_run = dir / "real";
  std::filesystem::rename(run_dir(dir), real_run);
  EXPECT_EQ(read_json(peer_dir(real_run, 0) / "summary.json")["links"], "plain");
  FastkProcess sim({"sim", config.string(), "--quiet", "--no-plots"});
  const auto sim_status = sim.wait(Seconds(120));
  ASSERT_TRUE(sim_status && sim_status->ok()) << sim.output();
  for (int i = 0; i < e.peers; ++i) expect_simulations_model(real_run, sim_dir(dir), i);
}

INSTANTIATE_TEST_SUITE_P(LocalTransports, ForgedFrames, ::testing::Values("tcp", "shm"));

// Two peers of a 2-peer ring started by hand, peer i with `extra(i)` on its command line,
// that must fail to start (within the 3 s start-up time-out): what each printed.
std::vector<std::string> failed_starts(const std::filesystem::path& dir,
                                       const std::function<std::vector<std::string>(int)>& extra) {
  TinyExperiment e = tiny_experiment(2, 100);
  e.startup_timeout_ms = 3000;
  const auto config = write_config(dir, e);
  std::vector<std::unique_ptr<FastkProcess>> peers;
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> argv = {"node",     config.string(),      "--id", std::to_string(i),
                                     "--output", run_dir(dir).string()};
    for (auto& a : extra(i)) argv.push_back(a);
    peers.push_back(std::make_unique<FastkProcess>(argv));
  }
  std::vector<std::string> outputs;
  for (auto& peer : peers) {
    const auto status = peer->wait(Seconds(30));
    EXPECT_TRUE(status.has_value() && !status->ok()) << peer->output();
    outputs.push_back(peer->output());
  }
  return outputs;
}

// Peers given keys of two different folders refuse each other's handshakes; the start-up
// error says so instead of only "did not hear from".
TEST(CurveKeysOfTwoFolders, ThePeersSayWhyTheyDidNotHearEachOther) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const auto outputs = failed_starts(dir, [&](int i) {
    const auto keys = dir / ("keys-" + std::to_string(i));
    node::transport::write_key_folder(keys, 2);
    return std::vector<std::string>{"--keys", keys.string()};
  });
  for (const auto& output : outputs) {
    // Each expects the other's server key from its own folder: the handshake fails before the
    // gate is asked (a "bad handshake", not an "unknown key").
    EXPECT_THAT(output, ::testing::HasSubstr("refused connections ("));
    EXPECT_THAT(output, ::testing::HasSubstr("keys of one folder"));
  }
}

// fastk run gives each launch a nonce of its own, mixed into the run id every HELLO carries:
// peers of two launches of one config refuse each other (they used to form one ring when
// started at once), and say it is another run.
TEST(RunNonce, PeersOfTwoLaunchesOfOneConfigRefuseEachOther) {
  const auto outputs = failed_starts(testutil::fresh_test_dir("fastk_sys"), [](int i) {
    return std::vector<std::string>{"--run-nonce", std::to_string(1000 + i)};
  });
  for (const auto& output : outputs) EXPECT_THAT(output, ::testing::HasSubstr("wrong run"));
}

}  // namespace
}  // namespace fastk::systest
