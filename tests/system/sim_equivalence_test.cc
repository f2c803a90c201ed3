// One protocol implementation serves both runtimes: with policy full (exact D-PSGD), real
// peers over ZeroMQ end with the same bits as `fastk sim` on the same config and seed,
// whatever the real timing was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>

#include "tests/support/data_fixtures.h"
#include "tests/support/system_support.h"

namespace fastk::systest {
namespace {

// Each way models travel between local peers (shared memory, the default; Unix-domain
// sockets; loopback TCP), on a static ring of 4 and on the time-varying one-peer exponential
// graph of 8 (each round a peer sends to i + 2^r and receives from i - 2^r, r = k mod 3);
// and the local step with its state (momentum, warm-up, schedule, weight decay) in both
// update orders.
struct Setup {
  std::string transport;
  std::string topology;
  std::string optimizer;  // more keys of [optimizer]
  std::string name;       // of the test case
};

void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

constexpr const char* kHeavyBallCosine =
    "momentum = 0.9\nschedule = \"cosine\"\nwarmup_iterations = 20\nweight_decay = 1e-3\n";
// Nesterov with a step schedule and weight decay, adapt-then-combine (the step comes before the
// mix).
constexpr const char* kNesterovStepAtc =
    "momentum = 0.5\nnesterov = true\nschedule = \"step\"\nstep_iterations = 50\n"
    "gamma = 0.5\nweight_decay = 1e-3\n";

class SimEquivalence : public ::testing::TestWithParam<Setup> {};

TEST_P(SimEquivalence, FullPolicyRealPeersEqualTheSimulationBitForBit) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const bool one_peer = GetParam().topology == "one_peer_exponential";
  TinyExperiment e = tiny_experiment(one_peer ? 8 : 4, 150, "full");
  e.topology = GetParam().topology;
  e.local_transport = GetParam().transport;
  e.optimizer_extra = GetParam().optimizer;
  if (GetParam().optimizer == kNesterovStepAtc)
    e.consensus_extra = "order = \"adapt_then_combine\"\n";
  // Stragglers make the real timing uneven (neighbours run ahead, messages interleave
  // differently than in virtual time); with full the result must not depend on it.
  e.extra = "[stragglers]\ntransient_probability = 0.2\ntransient_factor = 20\n";
  // A neighbour silent past the timeout is rightly treated as gone, and full then mixes
  // without it; on a loaded machine a 1 s stall happens, so give exactness room to show.
  e.peer_timeout_ms = 30000;
  const auto config = write_config(dir, e);

  ASSERT_TRUE(run_real_then_sim(dir, config));
  const auto real_run = dir / "real";

  for (int i = 0; i < e.peers; ++i) {
    const auto summary = read_json(peer_dir(real_run, i) / "summary.json");
    for (const auto& d : summary["departures"]) {
      EXPECT_EQ(d.value("how", ""), "bye") << "peer " << i << " lost a neighbour mid-run";
    }
    // The models after the first went through shared memory exactly when asked to.
    const std::uint64_t shared = summary.value("shared_models_sent", std::uint64_t{0});
    if (e.local_transport == "shm") {
      // Every model but the first, to each receiver of its round (both ring neighbours, the
      // one one-peer receiver), unless all slots were briefly in use (then one goes whole
      // over the socket): most of them.
      const std::uint64_t receivers = one_peer ? 1 : 2;
      EXPECT_GE(shared, receivers * e.iterations / 2) << "peer " << i;
    } else {
      EXPECT_EQ(shared, 0u) << "peer " << i;
    }
    expect_simulations_model(real_run, sim_dir(dir), i);
  }
}

// Augmented CIFAR-format images (crop_flip, per-channel normalisation): a real peer holds
// only its shard, the simulator the whole set, and both augment each batch alike, so the
// models end with the same bits. 120 training images, 30 per peer, batches of 8.
TEST(Augmentation, RealPeersEqualTheSimulationBitForBit) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  fastk::testing::write_cifar_batches(dir / "cifar", 24);
  const auto cifar = [&](const std::string& augment) {
    return "kind = \"cifar10\"\ndir = \"" + (dir / "cifar").string() +
           "\"\nnormalization = \"per_channel\"\naugment = \"" + augment + "\"\n";
  };
  TinyExperiment e = tiny_experiment(4, 30, "full");
  e.data = cifar("crop_flip");
  e.model = "logistic_regression";
  e.lr = 0.01;
  e.peer_timeout_ms = 30000;
  e.extra = "[stragglers]\ntransient_probability = 0.2\ntransient_factor = 5\n";
  const auto config = write_config(dir, e);
  ASSERT_TRUE(run_real_then_sim(dir, config));
  for (int i = 0; i < e.peers; ++i) expect_simulations_model(dir / "real", sim_dir(dir), i);
  // Augmentation changed the training: without it the simulation ends elsewhere.
  e.data = cifar("none");
  std::filesystem::rename(sim_dir(dir), dir / "augmented-sim");
  FastkProcess plain({"sim", write_config(dir, e).string(), "--quiet", "--no-plots"});
  const auto status = plain.wait(Seconds(120));
  ASSERT_TRUE(status && status->ok()) << plain.output();
  EXPECT_NE(read_bytes(peer_dir(sim_dir(dir), 0) / "model-final.f32"),
            read_bytes(peer_dir(dir / "augmented-sim", 0) / "model-final.f32"));
}

// A backup policy on the time-varying graph, 16 real peers: with m_min = 0 the fast peers
// skip the in-neighbour of a round when it is the slow one, and every peer still finishes.
TEST(TimeVarying, SixteenRealPeersOnTheOnePeerGraphRunUnderAdaptive) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(16, 200, "adaptive");
  e.topology = "one_peer_exponential";
  e.m_min = 0;
  e.startup_timeout_ms = 30000;
  e.extra = "[stragglers]\nslow_peers = [3]\nslow_factors = [20]\n";
  const auto config = write_config(dir, e);
  FastkProcess real({"run", config.string(), "--no-plots"});
  const auto status = real.wait(Seconds(120));
  ASSERT_TRUE(status && status->ok()) << real.output();
  const auto summary = read_json(run_dir(dir) / "summary.json");
  for (int i = 0; i < e.peers; ++i) {
    const auto& peer = summary["per_peer"][i];
    EXPECT_EQ(peer.value("iterations", 0), e.iterations) << "peer " << i;
    EXPECT_TRUE(peer["rejected_frames"].empty()) << "peer " << i;
  }
  // One in-neighbour per round: awaited is 0 or 1, and some rounds went without it.
  EXPECT_LE(summary.value("mean_awaited", 2.0), 1.0);
  EXPECT_GT(summary.value("mean_backups", 0.0), 0.0);
  EXPECT_GT(summary.value("final_test_accuracy", 0.0), 0.5);
}

// Push-sum on a random strongly connected directed graph of 20 peers (a directed ring and 30
// random arcs): real peers end with the simulator's bits under full (the protocol's push-sum
// properties are unit-tested in tests/unit/consensus/push_sum_test.cc), and the mean of their
// de-biased models learns although no row of the weights sums to 1.
TEST(PushSum, RealPeersOnADirectedGraphEqualTheSimulationBitForBit) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  constexpr int kPeers = 20;
  std::set<std::pair<int, int>> arcs;
  for (int i = 0; i < kPeers; ++i) arcs.insert({i, (i + 1) % kPeers});
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> peer(0, kPeers - 1);
  while (arcs.size() < kPeers + 30) {
    const int a = peer(rng), b = peer(rng);
    if (a != b) arcs.insert({a, b});
  }
  {
    std::ofstream file(dir / "arcs.txt");
    for (const auto& [a, b] : arcs) file << a << " " << b << "\n";
  }
  TinyExperiment e = tiny_experiment(kPeers, 100, "full");
  e.topology = "edge_list";
  e.topology_extra = "file = \"" + (dir / "arcs.txt").string() + "\"\ndirected = true\n";
  e.consensus_extra = "push_sum = true\n";
  e.peer_timeout_ms = 30000;
  e.startup_timeout_ms = 30000;
  e.extra = "[stragglers]\ntransient_probability = 0.2\ntransient_factor = 20\n";
  const auto config = write_config(dir, e);
  ASSERT_TRUE(run_real_then_sim(dir, config));
  const auto real_run = dir / "real";
  for (int i = 0; i < kPeers; ++i) expect_simulations_model(real_run, sim_dir(dir), i);
  // The mean of the de-biased models learned (the data are easy: about 96%).
  const auto summary = read_json(real_run / "summary.json");
  EXPECT_GT(summary.value("final_test_accuracy", 0.0), 0.9) << summary.dump();
}

// Compressed gossip (docs/compression.md) under full: real peers send COMPRESSED_DIFFERENCE
// frames and end with the simulator's bits, for a compressor that rounds at random (int8: the
// seeds are the same in both runtimes) and a sparsifier (top_k). The estimates move only by
// the differences, so one lost, repeated or reordered would part the two runs for good.
TEST(CompressedGossip, RealPeersEqualTheSimulationBitForBit) {
  for (const std::string kind : {"int8", "top_k"}) {
    const auto dir = testutil::fresh_test_dir("fastk_sys");
    TinyExperiment e = tiny_experiment(4, 150, "full");
    e.consensus_extra = "order = \"adapt_then_combine\"\n";
    e.peer_timeout_ms = 30000;
    e.extra =
        "[stragglers]\ntransient_probability = 0.2\ntransient_factor = 20\n"
        "[compression]\nkind = \"" +
        kind + "\"\nfraction = 0.1\n";
    const auto config = write_config(dir, e);
    ASSERT_TRUE(run_real_then_sim(dir, config)) << kind;
    const auto real_run = dir / "real";
    for (int i = 0; i < e.peers; ++i) {
      const auto summary = read_json(peer_dir(real_run, i) / "summary.json");
      EXPECT_EQ(summary.value("dropped_messages", -1), 0) << kind << " peer " << i;
      EXPECT_TRUE(summary["rejected_frames"].empty()) << kind << " peer " << i;
      // Differences go whole over the socket, never through the shared model slots.
      EXPECT_EQ(summary.value("shared_models_sent", std::uint64_t{1}), 0u) << kind;
      expect_simulations_model(real_run, sim_dir(dir), i);
    }
    const auto real = read_json(real_run / "summary.json");
    EXPECT_GT(real.value("final_test_accuracy", 0.0), 0.8) << kind;
  }
}

// Link delays ([stragglers] link_s, link_jitter_s, links) mean the same in both runtimes: a
// real peer holds each neighbour's message the seeded delay of its link and iteration before
// the protocol sees it, as the simulator delivers it that much later. Under policy full the
// bits agree, and the real run takes at least the delays it was given.
TEST(LinkDelays, RealPeersHoldMessagesAsTheSimulationDeliversThem) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  TinyExperiment e = tiny_experiment(4, 30, "full");
  e.peer_timeout_ms = 30000;
  e.extra =
      "[stragglers]\nlink_s = 0.04\nlink_jitter_s = 0.01\n"
      "[[stragglers.links]]\nfrom = 0\nto = 1\ndelay_s = 0.1\n";
  const auto config = write_config(dir, e);

  ASSERT_TRUE(run_real_then_sim(dir, config));
  const auto real_run = dir / "real";
  // Peer 1 ends iteration k only with peer 0's tag-k model, which peer 0 sends once it has
  // peer 1's tag k-1 model: 0.1 s on link 0->1 and at least 0.04 s back, every two
  // iterations, so 15 x 0.14 s at least (without the 0->1 override it would be 1.2 s).
  const auto summary = read_json(real_run / "summary.json");
  EXPECT_GE(summary["training_phase_s"].get<double>(), 14 * 0.14);
  for (int i = 0; i < e.peers; ++i) expect_simulations_model(real_run, sim_dir(dir), i);
}

// `fastk sim` and `fastk run` on one config leave the same files with the same schemas: the
// same CSV columns, the same JSON keys (what a runtime does not measure is null). A real run
// also records what a replay needs (arrivals.csv, timers.csv; docs/simulation.md §8).
TEST(RunFolder, SimAndRunLeaveTheSameFilesWithTheSameSchemas) {
  const auto dir = testutil::fresh_test_dir("fastk_sys");
  const auto config = write_config(dir, tiny_experiment(4, 40, "static"));
  ASSERT_TRUE(run_real_then_sim(dir, config));
  const auto real_run = dir / "real";
  const auto sim_run = sim_dir(dir);

  const auto files = files_of(sim_run);
  auto real_files = files_of(real_run);
  EXPECT_EQ(real_files.erase("arrivals.csv"), 1u);
  real_files.erase("timers.csv");  // there when a timer the protocol armed fired
  EXPECT_EQ(files, real_files);
  for (const char* must :
       {"summary.json", "resolved_config.json", "evaluation.csv", "iterations.csv",
        "peer_accuracy.csv", "peers/peer-0/summary.json", "peers/peer-0/model-final.f32"}) {
    EXPECT_TRUE(files.count(must)) << must;
  }
  for (const auto& file : files) {
    if (file.ends_with(".json")) {
      const auto a = read_json(sim_run / file), b = read_json(real_run / file);
      EXPECT_EQ(keys_of(a), keys_of(b)) << file;
      if (file == "summary.json") {
        EXPECT_EQ(a["runtime"], "sim");
        EXPECT_EQ(b["runtime"], "real");
      }
    } else if (file.ends_with(".csv")) {
      EXPECT_EQ(first_line(sim_run / file), first_line(real_run / file)) << file;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    LocalTransports, SimEquivalence,
    ::testing::Values(Setup{"shm", "ring", "", "shm"}, Setup{"ipc", "ring", "", "ipc"},
                      Setup{"tcp", "ring", "", "tcp"},
                      Setup{"shm", "one_peer_exponential", "", "shm_one_peer"},
                      Setup{"ipc", "one_peer_exponential", "", "ipc_one_peer"},
                      Setup{"tcp", "one_peer_exponential", "", "tcp_one_peer"},
                      Setup{"shm", "ring", kHeavyBallCosine, "shm_momentum_cosine"},
                      Setup{"tcp", "ring", kNesterovStepAtc, "tcp_nesterov_step_atc"}),
    [](const ::testing::TestParamInfo<Setup>& param) { return param.param.name; });

}  // namespace
}  // namespace fastk::systest
