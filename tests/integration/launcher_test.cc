// The launcher's process management on real child processes: output capture into logs,
// progress parsing, failure reports, stop requests and ssh command construction.
#include "node/launch/launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace fastk::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::filesystem::path fresh_dir() { return testutil::fresh_test_dir("fastk_launch"); }

PeerLaunch shell_peer(int id, const std::string& script) {
  return {id, "", {"/bin/sh", "-c", script}};
}

LaunchOptions quiet(const std::filesystem::path& dir) {
  LaunchOptions o;
  o.log_dir = dir;
  o.live_progress = false;
  return o;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(Launcher, APeerThatDiesBeforeItIsReadyStopsTheOthersAtOnceAndIsNamed) {
  auto dir = fresh_dir();
  // Peer 0 is ready and would wait 60 s for the go; peer 1 dies while loading.
  std::vector<PeerLaunch> peers{shell_peer(0, "echo @ready; sleep 60"),
                                shell_peer(1, "echo cannot read the data set >&2; exit 3")};
  LaunchOptions options = quiet(dir);
  options.start_together = true;
  std::ostringstream status;
  const auto start = std::chrono::steady_clock::now();
  const LaunchResult r = launch_peers(peers, options, status);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_TRUE(r.exited_before_start.has_value());
  EXPECT_EQ(*r.exited_before_start, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.stopped);  // not a user's stop request
  const std::string report = describe_failures(r);
  EXPECT_THAT(report, HasSubstr("peer 1 exited before it was ready"));
  EXPECT_THAT(report, HasSubstr("cannot read the data set"));
}

// --restart-failed: a peer that fails after the go is started again with its restart
// command, at most restart_failed times; the log keeps both processes' output, and the
// report says how the earlier ones ended.
TEST(Launcher, APeerThatFailsMidRunIsRestartedAtMostNTimes) {
  auto dir = fresh_dir();
  PeerLaunch comes_back = shell_peer(0, "echo first; kill -9 $$");
  comes_back.restart_argv = {"/bin/sh", "-c", "echo second"};
  PeerLaunch keeps_failing = shell_peer(1, "exit 4");
  keeps_failing.restart_argv = {"/bin/sh", "-c", "exit 5"};
  LaunchOptions options = quiet(dir);  // no start together: the run is under way at once
  options.restart_failed = 1;
  std::ostringstream status;
  const LaunchResult r = launch_peers({comes_back, keeps_failing}, options, status);
  ASSERT_EQ(r.peers.size(), 2u);
  EXPECT_TRUE(r.peers[0].status.ok());
  EXPECT_THAT(r.peers[0].restarted_after, ElementsAre("killed by SIGKILL"));
  const std::string log = read_file(dir / "peer-0.log");
  EXPECT_THAT(log, HasSubstr("first"));
  EXPECT_THAT(log, HasSubstr("restarting it (restart 1 of 1)"));
  EXPECT_THAT(log, HasSubstr("second"));
  EXPECT_EQ(r.peers[1].status.code, 5) << "the restart's own failure ends it: one restart";
  EXPECT_THAT(r.peers[1].restarted_after, ElementsAre("exit code 4"));
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(describe_failures(r), HasSubstr("peer 1 failed (exit code 5) after 1 restart(s)"));
  EXPECT_THAT(status.str(), HasSubstr("peer 1 failed (exit code 4; last reported iteration 0)"));
}

// Without restart_failed, or before the go, a failed peer is not restarted.
TEST(Launcher, NoRestartWithoutTheOptionOrBeforeTheGo) {
  auto dir = fresh_dir();
  PeerLaunch fails = shell_peer(0, "echo @ready; exit 4");
  fails.restart_argv = {"/bin/sh", "-c", "exit 0"};
  std::ostringstream status;
  const LaunchResult r = launch_peers({fails}, quiet(dir), status);
  EXPECT_EQ(r.peers[0].status.code, 4);
  EXPECT_TRUE(r.peers[0].restarted_after.empty());
  PeerLaunch dies_early = shell_peer(0, "exit 3");
  dies_early.restart_argv = {"/bin/sh", "-c", "exit 0"};
  PeerLaunch waits = shell_peer(1, "echo @ready; sleep 30");
  LaunchOptions options = quiet(dir);
  options.start_together = true;
  options.restart_failed = 2;
  const LaunchResult early = launch_peers({dies_early, waits}, options, status);
  EXPECT_TRUE(early.peers[0].restarted_after.empty());
  EXPECT_EQ(early.exited_before_start, 0);
}

TEST(Launcher, CollectsLogsAndTheLastProgressOfEveryPeer) {
  auto dir = fresh_dir();
  std::vector<PeerLaunch> peers;
  for (int i = 0; i < 3; ++i) {
    peers.push_back(shell_peer(
        i,
        "echo hello from " + std::to_string(i) +
            "; echo '@progress iteration=5 iterations=10 loss=0.5'; "
            "echo '@progress iteration=10 iterations=10 loss=0.25 accuracy=0.9'; echo warn >&2"));
  }
  std::ostringstream status;
  LaunchResult r = launch_peers(peers, quiet(dir), status);
  ASSERT_TRUE(r.ok()) << describe_failures(r);
  ASSERT_EQ(r.peers.size(), 3u);
  for (const auto& p : r.peers) {
    ASSERT_TRUE(p.last_progress.has_value());
    EXPECT_EQ(p.last_progress->iteration, 10);
    EXPECT_DOUBLE_EQ(p.last_progress->accuracy, 0.9);
    std::string log = read_file(p.log);
    EXPECT_THAT(log, HasSubstr("hello from " + std::to_string(p.peer)));
    EXPECT_THAT(log, HasSubstr("warn"));  // stderr is captured too
  }
  EXPECT_TRUE(status.str().empty());
}

TEST(Launcher, AFailedPeerIsNamedWithItsExitCodeLogAndLastLines) {
  auto dir = fresh_dir();
  LaunchResult r = launch_peers(
      {shell_peer(0, "exit 0"), shell_peer(1, "echo 'fastk: error: bad data file'; exit 3")},
      quiet(dir), std::cerr);
  EXPECT_FALSE(r.ok());
  std::string report = describe_failures(r);
  EXPECT_THAT(report,
              HasSubstr("peer 1 failed (exit code 3); log: " + (dir / "peer-1.log").string()));
  EXPECT_THAT(report, HasSubstr("| fastk: error: bad data file"));
  EXPECT_THAT(report, ::testing::Not(HasSubstr("peer 0")));
}

TEST(Launcher, ASignalledPeerIsReportedAsSuch) {
  auto dir = fresh_dir();
  LaunchResult r = launch_peers({shell_peer(0, "kill -9 $$")}, quiet(dir), std::cerr);
  EXPECT_THAT(describe_failures(r), HasSubstr("killed by SIGKILL"));
}

TEST(Launcher, AStopRequestTerminatesEveryPeer) {
  auto dir = fresh_dir();
  LaunchOptions o = quiet(dir);
  auto start = std::chrono::steady_clock::now();
  o.should_stop = [start] {
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300);
  };
  // exec: the shell becomes sleep, so SIGTERM reaches the long-running process itself.
  LaunchResult r =
      launch_peers({shell_peer(0, "exec sleep 30"), shell_peer(1, "exec sleep 30")}, o, std::cerr);
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.ok());
  for (const auto& p : r.peers) EXPECT_EQ(p.status.signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Launcher, PeersThatIgnoreSigtermAreKilledAfterTheGracePeriod) {
  auto dir = fresh_dir();
  LaunchOptions o = quiet(dir);
  o.stop_grace_s = 0.3;
  o.should_stop = [] { return true; };
  LaunchResult r =
      launch_peers({shell_peer(0, "trap '' TERM; sleep 30 & wait; sleep 30")}, o, std::cerr);
  EXPECT_EQ(r.peers[0].status.signal, SIGKILL);
}

TEST(Launcher, ANonexistentProgramIsAClearError) {
  auto dir = fresh_dir();
  try {
    launch_peers({{0, "", {"/nonexistent/fastk"}}}, quiet(dir), std::cerr);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot start '/nonexistent/fastk'"));
  }
}

TEST(Launcher, SshCommandQuotesForTheRemoteShell) {
  auto cmd = ssh_command({"ssh", "-T"}, "host-b", "/srv/fast k",
                         {"/opt/fastk", "node", "it's.toml", "--id", "3"});
  EXPECT_THAT(cmd, ElementsAre("ssh", "-T", "host-b",
                               "cd '/srv/fast k' && exec '/opt/fastk' 'node' 'it'\\''s.toml' "
                               "'--id' '3'"));
}

TEST(Launcher, ARemotePeerRunsThroughTheSshCommandAndStopsWhenStdinCloses) {
  // /bin/sh -c stands in for ssh: it runs the remote command line the same way sshd would.
  auto dir = fresh_dir();
  LaunchOptions o = quiet(dir);
  o.ssh = {"/bin/sh", "-c", "eval \"$1\""};
  o.remote_dir = dir.string();
  o.should_stop = [start = std::chrono::steady_clock::now()] {
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300);
  };
  o.stop_grace_s = 20;
  // The "remote peer" prints where it runs, then waits for end of file on stdin.
  LaunchResult r = launch_peers(
      {{7, "ignored-host", {"sh", "-c", "pwd; cat >/dev/null; echo stdin closed"}}}, o, std::cerr);
  std::string log = read_file(r.peers[0].log);
  EXPECT_THAT(log, HasSubstr("stdin closed"));
}

}  // namespace
}  // namespace fastk::node
