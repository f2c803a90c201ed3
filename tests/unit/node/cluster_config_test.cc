#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "node/config/cluster.h"
#include "node/config/experiment_config.h"
#include "tests/support/config_parsing.h"
#include "tests/support/temp_dir.h"

namespace fastk::node {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::error_of;
using testing::parse;

TEST(ClusterConfig, DefaultsPutEveryPeerOnLoopbackFromPort47000) {
  ExperimentConfig c = parse("[run]\n");
  EXPECT_TRUE(c.cluster.hosts.empty());
  EXPECT_EQ(c.cluster.base_port, 47000);
  EXPECT_EQ(c.cluster.peer_timeout_ms, 10000);
  EXPECT_EQ(c.cluster.startup_timeout_ms, 30000);
  EXPECT_EQ(c.cluster.local_transport, "shm");
  EXPECT_TRUE(c.cluster.bind_cpus);
  EXPECT_FALSE(parse("[cluster]\nbind_cpus = false\n").cluster.bind_cpus);
  // Every peer on this machine: Unix-domain sockets named after the TCP endpoint, models in
  // shared memory named the same way.
  PeerEndpoints e = peer_endpoints(c.cluster, 8, 5);
  EXPECT_EQ(e.bind, "ipc://" + ipc_directory() + "/127.0.0.1-47005.sock");
  EXPECT_EQ(ipc_directory_under("/tmp", 1000), "/tmp/fastk-1000");
  EXPECT_EQ(ipc_directory_under(nullptr, 1000), "/tmp/fastk-1000");
  EXPECT_EQ(ipc_directory_under("/work/build/test-tmp/", 0), "/work/build/test-tmp/fastk-0");
  EXPECT_EQ(ipc_directory_under("relative/tmp", 7), "/tmp/fastk-7");
  EXPECT_EQ(ipc_directory_under(("/" + std::string(kLongestSocketTmpdir, 'x')).c_str(), 7),
            "/tmp/fastk-7");  // too long for a socket path
  EXPECT_EQ(ipc_directory_under("/", 7), "/tmp/fastk-7");
  EXPECT_EQ(e.connect, e.bind);
  EXPECT_EQ(e.shared_models, "/fastk-127.0.0.1-47005.models");
  // "ipc": the same sockets, models over them.
  ExperimentConfig ipc = parse("[cluster]\nlocal_transport = \"ipc\"\n");
  EXPECT_EQ(peer_endpoints(ipc.cluster, 8, 5).bind, e.bind);
  EXPECT_EQ(peer_endpoints(ipc.cluster, 8, 5).shared_models, "");
}

TEST(ClusterConfig, LocalTransportTcpOrLanHostsUseLoopbackTcp) {
  ExperimentConfig c = parse(R"(
[topology]
peers = 4
[cluster]
hosts = ["localhost"]
local_transport = "tcp"
)");
  EXPECT_EQ(peer_endpoints(c.cluster, 4, 2).bind, "tcp://127.0.0.1:47002");
  EXPECT_EQ(peer_endpoints(c.cluster, 4, 2).connect, "tcp://localhost:47002");
  EXPECT_EQ(peer_endpoints(c.cluster, 4, 2).shared_models, "");
  // A loopback address beside LAN hosts: peers on the LAN host would reach it as themselves.
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[cluster]\nhosts = [\"127.0.0.1\", \"10.0.0.2\"]\n"),
              HasSubstr("cluster.hosts: mixes the loopback address 127.0.0.1 with the LAN host "
                        "10.0.0.2"));
  EXPECT_THAT(error_of("[topology]\npeers = 2\n[cluster]\nendpoints = [\"tcp://box:7000\", "
                       "\"tcp://localhost:6000\"]\n"),
              HasSubstr("cluster.endpoints: mixes the loopback address localhost with the LAN "
                        "host box"));
  EXPECT_THAT(
      error_of("[cluster]\nlocal_transport = \"udp\"\n"),
      HasSubstr("cluster.local_transport: expected \"shm\", \"ipc\" or \"tcp\", got \"udp\""));
}

TEST(ClusterConfig, HostsTakeBalancedBlocksOfPeers) {
  ExperimentConfig c = parse(R"(
[topology]
peers = 8
[cluster]
hosts = ["10.0.0.1", "10.0.0.2", "node3.lan"]
base_port = 50000
peer_timeout_ms = 500
startup_timeout_ms = 2000
)");
  EXPECT_EQ(c.cluster.peer_timeout_ms, 500);
  EXPECT_EQ(c.cluster.startup_timeout_ms, 2000);
  // 8 peers on 3 hosts: blocks of 3, 3, 2.
  const char* expected[] = {"tcp://10.0.0.1:50000",  "tcp://10.0.0.1:50001", "tcp://10.0.0.1:50002",
                            "tcp://10.0.0.2:50000",  "tcp://10.0.0.2:50001", "tcp://10.0.0.2:50002",
                            "tcp://node3.lan:50000", "tcp://node3.lan:50001"};
  for (int i = 0; i < 8; ++i) {
    PeerEndpoints e = peer_endpoints(c.cluster, 8, i);
    EXPECT_EQ(e.connect, expected[i]) << i;
    EXPECT_EQ(e.bind, "tcp://*:" + e.connect.substr(e.connect.rfind(':') + 1)) << i;
  }
}

TEST(ClusterConfig, ExplicitEndpointsOnePerPeer) {
  ExperimentConfig c = parse(R"(
[topology]
peers = 3
[cluster]
endpoints = ["tcp://localhost:6000", "tcp://127.0.0.2:6000", "tcp://127.0.0.3:7000"]
)");
  EXPECT_EQ(peer_endpoints(c.cluster, 3, 0).bind, "tcp://127.0.0.1:6000");
  EXPECT_EQ(peer_endpoints(c.cluster, 3, 0).connect, "tcp://localhost:6000");
  EXPECT_EQ(peer_endpoints(c.cluster, 3, 1).bind, "tcp://127.0.0.2:6000");
  EXPECT_EQ(peer_endpoints(c.cluster, 3, 2).bind, "tcp://127.0.0.3:7000");
  ExperimentConfig lan = parse(R"(
[topology]
peers = 2
[cluster]
endpoints = ["tcp://box:7000", "tcp://10.0.0.9:7000"]
)");
  EXPECT_EQ(peer_endpoints(lan.cluster, 2, 0).bind, "tcp://*:7000");
  EXPECT_EQ(peer_endpoints(lan.cluster, 2, 0).connect, "tcp://box:7000");
}

TEST(ClusterConfig, EveryProblemNamesItsPath) {
  std::string e = error_of(R"(
[topology]
peers = 4
[cluster]
endpoints = ["tcp://a:1", "udp://b:2", "tcp://c:70000", "tcp://a:1", "tcp://d"]
peer_timeout_ms = 0
base_prot = 5
)");
  EXPECT_THAT(e, HasSubstr("cluster.endpoints[1]: expected \"tcp://host:port\""));
  EXPECT_THAT(e, HasSubstr("got \"udp://b:2\""));
  EXPECT_THAT(e, HasSubstr("cluster.endpoints[2]"));
  EXPECT_THAT(e, HasSubstr("cluster.endpoints[4]"));
  EXPECT_THAT(e, HasSubstr("cluster.endpoints: 5 endpoints for 4 peers"));
  EXPECT_THAT(e, HasSubstr("cluster.peer_timeout_ms: expected an integer >= 1, got 0"));
  EXPECT_THAT(e, HasSubstr("cluster.base_prot: unknown key (did you mean 'base_port'?)"));
  EXPECT_THAT(e, Not(HasSubstr("duplicate")));  // reported once the syntax is right
}

TEST(ClusterConfig, DuplicatesPortsAndMixedFormsAreErrors) {
  EXPECT_THAT(error_of("[topology]\npeers = 2\n[cluster]\n"
                       "endpoints = [\"tcp://h:5000\", \"tcp://h:05000\"]\n"),
              HasSubstr("cluster.endpoints[1]: duplicate \"tcp://h:05000\""));
  EXPECT_THAT(error_of("[cluster]\nhosts = [\"a\", \"b\", \"a\"]\n"),
              HasSubstr("cluster.hosts[2]: duplicate"));
  EXPECT_THAT(error_of("[cluster]\nhosts = [\"a b\"]\n"),
              HasSubstr("cluster.hosts[0]: \"a b\" is not a host name or IPv4 address"));
  EXPECT_THAT(error_of("[cluster]\nhosts = [\"a\", 3]\n"),
              HasSubstr("cluster.hosts[1]: expected a string"));
  EXPECT_THAT(error_of("[cluster]\nhosts = \"a\"\n"),
              HasSubstr("cluster.hosts: expected an array of strings"));
  EXPECT_THAT(error_of("[cluster]\nhosts = [\"a\"]\nendpoints = [\"tcp://a:1\"]\n"),
              HasSubstr("cluster.endpoints: set either hosts (with base_port) or endpoints"));
  EXPECT_THAT(error_of("[cluster]\nbase_port = 65530\nlocal_transport = \"tcp\"\n"),  // 8 on one
              HasSubstr("cluster.base_port: base_port 65530 + 8 peers per host runs past port "
                        "65535"));
  // Over Unix sockets (the default on one machine) a port is only part of a socket's name.
  EXPECT_EQ(error_of("[cluster]\nbase_port = 65530\n"), "");
  EXPECT_THAT(error_of("[cluster]\nbase_port = 0\n"),
              HasSubstr("cluster.base_port: expected an integer in 1..65535, got 0"));
}

TEST(ClusterConfig, ResolvingChecksThePeerCountKnownOnlyLater) {
  // An edge-list topology has no peer count in the config: the check happens at resolution.
  ExperimentConfig c = parse(
      "[topology]\nkind = \"edge_list\"\nfile = \"e.txt\"\n"
      "[cluster]\nendpoints = [\"tcp://a:1\", \"tcp://a:2\"]\n");
  EXPECT_EQ(peer_endpoints(c.cluster, 2, 1).connect, "tcp://a:2");
  try {
    peer_endpoints(c.cluster, 3, 0);
    FAIL() << "3 peers with 2 endpoints resolved";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cluster.endpoints: 2 endpoints for 3 peers"));
  }
  EXPECT_THROW(peer_endpoints(c.cluster, 2, 2), ConfigError);
}

TEST(ClusterConfig, EndpointSyntax) {
  EXPECT_TRUE(parse_tcp_endpoint("tcp://10.1.2.3:65535"));
  EXPECT_EQ(parse_tcp_endpoint("tcp://host-1.lan:80")->host, "host-1.lan");
  for (const char* bad : {"tcp://:80", "tcp://h:", "tcp://h:0", "tcp://h:-1", "tcp://h:80x",
                          "tcp://h", "tcp://*:80", "ipc://x:1", "tcp://h h:1", ""}) {
    EXPECT_FALSE(parse_tcp_endpoint(bad)) << bad;
  }
}

// [security] (docs/security.md): who makes keys, and when a peer must have them.
TEST(SecurityConfig, CurveIsRequiredBetweenHostsAndMadeByTheLauncherThere) {
  const ExperimentConfig local = parse("[topology]\npeers = 4\n");
  const ExperimentConfig lan =
      parse("[topology]\npeers = 4\n[cluster]\nhosts = [\"10.0.0.1\", \"10.0.0.2\"]\n");
  EXPECT_EQ(local.security.curve, "auto");
  EXPECT_FALSE(spans_hosts(local.cluster, 4));
  EXPECT_TRUE(spans_hosts(lan.cluster, 4));

  EXPECT_FALSE(launcher_makes_keys(local.security, local.cluster, 4));
  EXPECT_TRUE(launcher_makes_keys(lan.security, lan.cluster, 4));
  SecurityConfig on{"on", ""}, off{"off", ""}, given{"auto", "/keys"};
  EXPECT_TRUE(launcher_makes_keys(on, local.cluster, 4));
  EXPECT_FALSE(launcher_makes_keys(off, lan.cluster, 4));
  EXPECT_FALSE(launcher_makes_keys(given, lan.cluster, 4)) << "the config names a folder";

  EXPECT_EQ(key_folder(local.security, local.cluster, 4, ""), "") << "local: plain";
  EXPECT_EQ(key_folder(local.security, local.cluster, 4, "/run/k"), "/run/k");
  EXPECT_EQ(key_folder(given, lan.cluster, 4, ""), "/keys");
  EXPECT_EQ(key_folder(given, lan.cluster, 4, "/cli"), "/cli") << "--keys wins";
  EXPECT_EQ(key_folder(off, lan.cluster, 4, "/cli"), "") << "off means plain";
  for (const SecurityConfig& needs : {lan.security, on}) {
    const auto& cluster = needs.curve == "on" ? local.cluster : lan.cluster;
    try {
      (void)key_folder(needs, cluster, 4, "");
      ADD_FAILURE() << "a peer without keys started where curve is " << needs.curve;
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("fastk keys DIR --config CONFIG"));
      EXPECT_THAT(e.what(), HasSubstr("curve = \"off\""));
    }
  }
}

// Any user of a machine can reach its loopback TCP ports: a local run over TCP is as open as
// a LAN, so "auto" makes it CURVE too; "off" leaves it plain, with a warning naming who could
// reach it. Unix-domain sockets (shm, ipc) stay plain and silent.
TEST(SecurityConfig, LocalTcpIsCurveByDefaultAndWarnsWhenTurnedOff) {
  const ExperimentConfig tcp =
      parse("[topology]\npeers = 4\n[cluster]\nlocal_transport = \"tcp\"\n");
  const ExperimentConfig shm = parse("[topology]\npeers = 4\n");
  EXPECT_TRUE(uses_tcp(tcp.cluster, 4));
  EXPECT_FALSE(uses_tcp(shm.cluster, 4));
  EXPECT_FALSE(spans_hosts(tcp.cluster, 4));
  EXPECT_TRUE(needs_curve(tcp.security, tcp.cluster, 4));
  EXPECT_FALSE(needs_curve(shm.security, shm.cluster, 4));
  EXPECT_TRUE(launcher_makes_keys(tcp.security, tcp.cluster, 4));
  EXPECT_FALSE(launcher_makes_keys(shm.security, shm.cluster, 4));
  try {
    (void)key_folder(tcp.security, tcp.cluster, 4, "");
    ADD_FAILURE() << "a peer on local TCP started without keys";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("peers use TCP"));
  }
  EXPECT_EQ(plain_tcp_warning(tcp.security, tcp.cluster, 4), std::nullopt);
  const SecurityConfig off{"off", ""};
  const auto warning = plain_tcp_warning(off, tcp.cluster, 4);
  ASSERT_TRUE(warning.has_value());
  EXPECT_THAT(*warning, HasSubstr("any user of this machine"));
  const ExperimentConfig lan =
      parse("[topology]\npeers = 4\n[cluster]\nhosts = [\"10.0.0.1\", \"10.0.0.2\"]\n");
  EXPECT_THAT(plain_tcp_warning(off, lan.cluster, 4).value_or(""),
              HasSubstr("any host of the network"));
  EXPECT_EQ(plain_tcp_warning(off, shm.cluster, 4), std::nullopt);
}

// [attack] (docs/security.md "Attacks"): which peers misbehave and how; what it cannot be.
TEST(AttackConfig, AttackersAndKindAreReadAndBadOnesNamed) {
  const ExperimentConfig none = parse("[topology]\npeers = 4\n");
  EXPECT_FALSE(none.consensus.protocol.attack.has_value());
  const ExperimentConfig two =
      parse("[topology]\npeers = 8\n[attack]\npeers = [2, 5]\nkind = \"alie\"\nscale = 1.5\n");
  ASSERT_TRUE(two.consensus.protocol.attack.has_value());
  EXPECT_EQ(two.consensus.protocol.attack->peers, (std::vector<int>{2, 5}));
  EXPECT_EQ(two.consensus.protocol.attack->kind, consensus::AttackKind::kAlie);
  EXPECT_EQ(two.consensus.protocol.attack->scale, 1.5);
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[attack]\npeers = [4]\n"),
              HasSubstr("attack.peers[0]: peer 4 is not a peer of the run (0 to 3)"));
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[attack]\npeers = [1, 1]\n"),
              HasSubstr("attack.peers[1]: peer 1 is listed twice"));
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[attack]\nkind = \"large\"\n"),
              HasSubstr("attack.peers: names no attacker"));
  EXPECT_THAT(error_of("[topology]\npeers = 2\n[attack]\npeers = [0, 1]\n"),
              HasSubstr("leaves no honest peer"));
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[attack]\npeers = [1]\nkind = \"flood\"\n"),
              HasSubstr("attack.kind: unknown attack kind \"flood\""));
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[attack]\npeers = [1]\nscale = -1\n"),
              HasSubstr("attack.scale"));
  EXPECT_THAT(error_of("[topology]\npeers = 4\n[attack]\npeers = [1]\nscale = 1e40\n"),
              HasSubstr("attack.scale: at most 1e30: a forged model must stay finite"));
  EXPECT_THAT(
      error_of("[topology]\npeers = 4\n[consensus]\npush_sum = true\n[attack]\npeers = [1]\n"),
      HasSubstr("attack: is for plain gossip"));
}

TEST(ClusterConfig, ValidationKeysAreCheckedAndNamed) {
  EXPECT_THAT(error_of("[consensus]\nvalidate = true\nvalidation_batch = 100000\n"),
              HasSubstr("consensus.validation_batch"));
  EXPECT_THAT(error_of("[consensus]\nvalidate = true\nvalidation_margin = -1\n"),
              HasSubstr("consensus.validation_margin"));
  EXPECT_THAT(error_of("[consensus]\nvalidate = true\norder = \"adapt_then_combine\"\n"),
              HasSubstr("consensus.validate: needs order = \"combine_then_adapt\""));
  EXPECT_THAT(error_of("[consensus]\nvalidate = true\npush_sum = true\n"),
              HasSubstr("consensus.validate: is for plain gossip"));
  EXPECT_THAT(error_of("[consensus]\nvalidate = true\nvalidation_score = \"zeno\"\n"),
              HasSubstr("expected loss or first_order"));
  // The penalty defaults by score: the first-order estimate needs the larger one.
  const auto penalty = [](const std::string& score) {
    return parse("[consensus]\nvalidate = true\nvalidation_score = \"" + score + "\"\n")
        .consensus.protocol.validation_penalty;
  };
  EXPECT_EQ(penalty("first_order"), 1e-2);
  EXPECT_EQ(penalty("loss"), 1e-3);
  EXPECT_EQ(parse("[consensus]\nvalidate = true\n").consensus.protocol.validation_score,
            consensus::ValidationScore::kFirstOrder);
  EXPECT_EQ(parse("[consensus]\nvalidation_score = \"loss\"\nvalidation_penalty = 0.5\n")
                .consensus.protocol.validation_penalty,
            0.5);
}

// What only the built graph tells: an edge list's peers, and each peer's neighbours.
TEST(AttackConfig, AttackersAndClippingAreCheckedAgainstTheGraph) {
  const auto dir = testutil::fresh_test_dir("fastk_attack_graph");
  std::ofstream(dir / "e.txt") << "0 1\n1 2\n2 0\n";
  const auto config = dir / "c.toml";
  const auto error_in = [&](const std::string& text) {
    std::ofstream(config) << text;
    try {
      load_config(config);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string edges = "[topology]\nkind = \"edge_list\"\nfile = \"e.txt\"\n";
  EXPECT_THAT(error_in(edges + "[attack]\npeers = [3]\n"),
              HasSubstr("attack.peers[0]: peer 3 is not a peer of the run (0 to 2)"));
  EXPECT_EQ(error_in(edges + "[attack]\npeers = [2]\n"), "accepted");
  // Two neighbours each: an adaptive radius past two faulty ones is never measured.
  EXPECT_THAT(
      error_in(edges + "[consensus]\naggregation = \"clipped_gossip\"\nfaulty_neighbours = 2\n"),
      HasSubstr("consensus.faulty_neighbours: consensus.aggregation = \"clipped_gossip\" "
                "measures its radius past the 2 farthest neighbours"));
  EXPECT_EQ(error_in(edges + "[consensus]\naggregation = \"clipped_gossip\"\n"), "accepted");
  EXPECT_EQ(
      error_in(edges + "[consensus]\naggregation = \"clipped_gossip\"\nfaulty_neighbours = 2\n"
                       "clipping_radius = 0.5\n"),
      "accepted");
}

TEST(LocalStepsConfig, ReadAndWhatExcludesItNamed) {
  EXPECT_EQ(parse("[consensus]\nlocal_steps = 4\n").consensus.protocol.local_steps, 4);
  EXPECT_EQ(parse("[run]\n").consensus.protocol.local_steps, 1);
  EXPECT_THAT(error_of("[consensus]\nlocal_steps = 0\n"), HasSubstr("consensus.local_steps"));
  EXPECT_THAT(error_of("[consensus]\nlocal_steps = 2\npush_sum = true\n"),
              HasSubstr("consensus.local_steps: and push_sum exclude each other"));
  EXPECT_THAT(error_of("[consensus]\nlocal_steps = 2\nmax_gap = 1\n"),
              HasSubstr("consensus.local_steps: and max_gap exclude each other"));
  EXPECT_THAT(error_of("[topology]\nkind = \"hypercube\"\n[consensus]\nlocal_steps = 2\n"
                       "[coding]\nscheme = \"frc\"\nstragglers = 1\n"),
              HasSubstr("consensus.local_steps: and [coding] exclude each other"));
}

TEST(SecurityConfig, BadValuesAreNamedAndKeysAreRelativeToTheConfigFile) {
  EXPECT_THAT(error_of("[security]\ncurve = \"yes\"\n"), HasSubstr("security.curve"));
  EXPECT_THAT(error_of("[security]\nkey = \"k\"\n"), HasSubstr("security.key"));
  EXPECT_EQ(parse("[security]\nkeys = \"lan-keys\"\n").security.keys, "/cfg/lan-keys");
}

}  // namespace
}  // namespace fastk::node
