// A foreign program without the run's keys, forging what used to poison a run: a MODEL full
// of NaN, one of 1e30 tagged with the last iteration, and a BYE (which made a peer stop
// waiting for its neighbour), each claiming to come from peer 1,
// sent plain and with a CURVE key of its own, every 20 ms (never blocking) over connections
// made afresh every 200 ms, from construction until destruction, or 5 minutes (a bound for a
// test that forgets it): a run's start-up over ssh on a loaded machine can take longer than
// any shorter bound. Given the peer's public key (public keys are public), its CURVE
// handshake gets as far as the peer's gate, which must refuse its key.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <thread>

#include "node/transport/curve_keys.h"
#include "tests/support/raw_sender.h"
#include "tests/support/system_support.h"

namespace fastk::systest {

class Forger {
 public:
  Forger(const std::string& endpoint, std::size_t model_floats, std::int64_t last_iteration,
         std::string server_public_key = "")
      : thread_([=, this] { forge(endpoint, model_floats, last_iteration, server_public_key); }) {}
  ~Forger() { stop(); }

  // Stops forging; says what the forger's two connections went through (ZeroMQ's monitor
  // events), for a test's failure message.
  std::string stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return seen_;
  }

 private:
  void forge(const std::string& endpoint, std::size_t floats, std::int64_t last_iteration,
             const std::string& server_public_key) {
    namespace wire = node::wire;
    const std::vector<float> nan(floats, std::nanf("")), huge(floats, 1e30f);
    const auto forged_nan = fastk::testing::to_frames(wire::encode_model(1, 0, nullptr, nan));
    const auto forged_huge =
        fastk::testing::to_frames(wire::encode_model(1, last_iteration, nullptr, huge));
    const auto forged_bye = fastk::testing::to_frames(wire::encode_bye(1, last_iteration / 2));
    const auto own = node::transport::make_key_pair();
    const std::string server = server_public_key.empty()
                                   ? node::transport::make_key_pair().public_key  // a guess
                                   : server_public_key;
    // Fresh connections every 10 rounds, as a persistent attacker would make: ZeroMQ gives
    // up a connection for good after a protocol error, and the forger's first connections
    // may reach `fastk run`'s port check (a plain socket bound briefly before the peers
    // start) instead of peer 0.
    std::map<int, int> plain_events, keyed_events;
    int rounds = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      fastk::testing::RawSender plain(endpoint);
      fastk::testing::RawSender keyed(
          endpoint, std::chrono::milliseconds(0),
          fastk::testing::CurveClient{server, own.public_key, own.secret_key});
      plain.watch("plain");
      keyed.watch("keyed");
      for (int round = 0; round < 10 && !stop_; ++round, ++rounds) {
        (void)plain.try_send(forged_nan);
        (void)plain.try_send(forged_huge);
        (void)plain.try_send(forged_bye);
        (void)keyed.try_send(forged_huge);
        (void)keyed.try_send(forged_bye);
        (void)plain.events(), (void)keyed.events();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      for (const auto& [id, count] : plain.events()) plain_events[id] += count;
      for (const auto& [id, count] : keyed.events()) keyed_events[id] += count;
    }
    seen_ = "forger to " + endpoint + ", " + std::to_string(rounds) + " rounds; plain senders " +
            describe(plain_events) + "; keyed senders " + describe(keyed_events);
  }

  static std::string describe(const std::map<int, int>& events) {
    std::string text = "events {";
    for (const auto& [id, count] : events) {
      text += " 0x" + hex(id) + ": " + std::to_string(count);
    }
    return text + " }";
  }
  static std::string hex(int value) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%x", value);
    return digits;
  }

  std::atomic<bool> stop_{false};
  std::string seen_;    // written by the thread before it ends
  std::thread thread_;  // last: starts once the rest is built
};

// Connection attempts `summary` (a peer's summary.json) says were refused: for `cause`, or
// for all causes.
inline std::uint64_t refused_connections(const nlohmann::json& summary,
                                         const std::string& cause = "") {
  std::uint64_t refused = 0;
  for (const auto& [name, count] : summary["refused_connections"].items()) {
    if (cause.empty() || name == cause) refused += count.get<std::uint64_t>();
  }
  return refused;
}

}  // namespace fastk::systest
