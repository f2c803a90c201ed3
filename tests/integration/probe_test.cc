// The ZeroMQ probe fastk doctor runs on every edge (node/transport/probe.h), on loopback: a
// served port is reached with a round trip and a bandwidth, a port already held is reported
// with ZeroMQ's reason, and a port nobody serves is not reached within the timeout.
#include "node/transport/probe.h"

#include <gtest/gtest.h>

#include <random>

namespace fastk::node::transport {
namespace {

int some_port() {
  static std::mt19937 random(std::random_device{}());
  return std::uniform_int_distribution<int>(20000, 30000)(random);
}

TEST(Probe, AServedPortIsReachedWithARoundTripAndABandwidth) {
  const std::string port = std::to_string(some_port());
  ProbeServer server({"tcp://127.0.0.1:" + port});
  ASSERT_EQ(server.bind_errors().size(), 1u);
  ASSERT_EQ(server.bind_errors()[0], "") << "port " << port << " taken by something else";
  const ProbeResult r =
      probe_endpoint("tcp://127.0.0.1:" + port, 1 << 20, std::chrono::milliseconds(2000));
  EXPECT_TRUE(r.reached) << r.error;
  EXPECT_GT(r.round_trip_s, 0);
  EXPECT_LT(r.round_trip_s, 1.0);
  EXPECT_GT(r.bits_per_s, 1e6);  // loopback moves far more than a megabit per second
}

TEST(Probe, APortHeldByAnotherServerIsReportedAndTheOthersServe) {
  const int base = some_port();
  ProbeServer first({"tcp://127.0.0.1:" + std::to_string(base)});
  ASSERT_EQ(first.bind_errors()[0], "");
  ProbeServer second(
      {"tcp://127.0.0.1:" + std::to_string(base), "tcp://127.0.0.1:" + std::to_string(base + 1)});
  EXPECT_NE(second.bind_errors()[0].find("Address already in use"), std::string::npos)
      << second.bind_errors()[0];
  EXPECT_EQ(second.bind_errors()[1], "");
  EXPECT_TRUE(probe_endpoint("tcp://127.0.0.1:" + std::to_string(base + 1), 0,
                             std::chrono::milliseconds(2000))
                  .reached);
}

TEST(Probe, APortNobodyServesIsNotReached) {
  const ProbeResult r = probe_endpoint("tcp://127.0.0.1:" + std::to_string(some_port()), 0,
                                       std::chrono::milliseconds(200));
  EXPECT_FALSE(r.reached);
  EXPECT_NE(r.error.find("no answer within 200 ms"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace fastk::node::transport
