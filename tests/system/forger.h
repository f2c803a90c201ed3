// A foreign program without the run's keys, forging what used to poison a run: a MODEL full
// of NaN, and one of 1e30 tagged with the last iteration, each claiming to come from peer 1,
// sent plain and with a CURVE key of its own, every 20 ms (at most 500 times, never blocking)
// from construction until destruction.
#pragma once

#include <atomic>
#include <cmath>
#include <thread>

#include "node/transport/curve_keys.h"
#include "tests/support/raw_sender.h"
#include "tests/system/system_support.h"

namespace fastk::systest {

class Forger {
 public:
  Forger(const std::string& endpoint, std::size_t model_floats, std::int64_t last_iteration)
      : thread_([=, this] { forge(endpoint, model_floats, last_iteration); }) {}
  ~Forger() {
    stop_ = true;
    thread_.join();
  }

 private:
  void forge(const std::string& endpoint, std::size_t floats, std::int64_t last_iteration) {
    namespace wire = node::wire;
    const std::vector<float> nan(floats, std::nanf("")), huge(floats, 1e30f);
    const auto forged_nan = fastk::testing::to_frames(wire::encode_model(1, 0, nullptr, nan));
    const auto forged_huge =
        fastk::testing::to_frames(wire::encode_model(1, last_iteration, nullptr, huge));
    // The forger knows the peer's address but not its key: any key will do to try.
    const auto own = node::transport::make_key_pair();
    const auto guessed_server = node::transport::make_key_pair();
    fastk::testing::RawSender plain(endpoint);
    fastk::testing::RawSender keyed(
        endpoint, std::chrono::milliseconds(0),
        fastk::testing::CurveClient{guessed_server.public_key, own.public_key, own.secret_key});
    for (int i = 0; i < 500 && !stop_; ++i) {
      (void)plain.try_send(forged_nan);
      (void)plain.try_send(forged_huge);
      (void)keyed.try_send(forged_huge);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once the rest is built
};

// Connection attempts `summary` (a peer's summary.json) says were refused, all causes.
inline std::uint64_t refused_connections(const nlohmann::json& summary) {
  std::uint64_t refused = 0;
  for (const auto& [cause, count] : summary["refused_connections"].items()) {
    refused += count.get<std::uint64_t>();
  }
  return refused;
}

}  // namespace fastk::systest
