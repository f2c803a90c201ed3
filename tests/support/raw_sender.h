// Test helper: sends raw multipart messages to a peer's endpoint over a ZeroMQ PUSH socket,
// as a misbehaving or foreign program would.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <zmq.hpp>

#include "tests/support/wire_frames.h"

namespace fastk::testing {

class RawSender {
 public:
  // `linger`: how long closing waits for queued frames to go out (0: drop them).
  explicit RawSender(const std::string& endpoint,
                     std::chrono::milliseconds linger = std::chrono::milliseconds(0))
      : socket_(context_, zmq::socket_type::push) {
    socket_.set(zmq::sockopt::linger, static_cast<int>(linger.count()));
    socket_.connect(endpoint);
  }
  void send(const Frames& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
      ASSERT_TRUE(socket_.send(zmq::buffer(frames[i].data(), frames[i].size()), flags));
    }
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_;
};

}  // namespace fastk::testing
