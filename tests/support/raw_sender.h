// Test helper: sends raw multipart messages to a peer's endpoint over a ZeroMQ PUSH socket,
// as a misbehaving or foreign program would.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "tests/support/wire_frames.h"

namespace fastk::testing {

// A CURVE client's keys: the server's public key, and a pair of its own (Z85).
struct CurveClient {
  std::string server_public;
  std::string own_public;
  std::string own_secret;
};

class RawSender {
 public:
  // `linger`: how long closing waits for queued frames to go out (0: drop them). With
  // `curve`, the connection is a CURVE client's (else plain).
  explicit RawSender(const std::string& endpoint,
                     std::chrono::milliseconds linger = std::chrono::milliseconds(0),
                     const std::optional<CurveClient>& curve = std::nullopt)
      : socket_(context_, zmq::socket_type::push) {
    socket_.set(zmq::sockopt::linger, static_cast<int>(linger.count()));
    // Retry the connection every 10 ms (ZeroMQ's default is 100 ms), so a peer that starts
    // listening is reached soon after, well within a short run.
    socket_.set(zmq::sockopt::reconnect_ivl, 10);
    // A PUSH socket whose only connection ended blocks a send for ever: libzmq (4.3) drops
    // a connection for good after a failed handshake. send() gives up after this long.
    socket_.set(zmq::sockopt::sndtimeo, static_cast<int>(kSendTimeout.count()));
    if (curve) {
      socket_.set(zmq::sockopt::curve_serverkey, curve->server_public);
      socket_.set(zmq::sockopt::curve_publickey, curve->own_public);
      socket_.set(zmq::sockopt::curve_secretkey, curve->own_secret);
    }
    socket_.connect(endpoint);
  }
  // Starts recording what happens to this socket's connections (see events()).
  void watch(const std::string& name) {
    const std::string at = "inproc://raw-sender-" + name;
    if (zmq_socket_monitor(socket_.handle(), at.c_str(), ZMQ_EVENT_ALL) != 0) {
      ADD_FAILURE() << "cannot monitor the raw sender: " << zmq_strerror(zmq_errno());
      return;
    }
    monitor_.emplace(context_, zmq::socket_type::pair);
    monitor_->set(zmq::sockopt::linger, 0);
    monitor_->connect(at);
  }
  // The connection events seen since watch(), by ZeroMQ event number (ZMQ_EVENT_*). Never
  // blocks.
  const std::map<int, int>& events() {
    while (monitor_) {
      zmq::message_t event, address;
      if (!monitor_->recv(event, zmq::recv_flags::dontwait)) break;
      if (event.more()) (void)monitor_->recv(address);
      std::uint16_t id = 0;
      if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
      ++events_[id];
    }
    return events_;
  }
  // Queues the message, waiting at most kSendTimeout for a connection to take it.
  void send(const Frames& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
      ASSERT_TRUE(socket_.send(zmq::buffer(frames[i].data(), frames[i].size()), flags))
          << "the raw sender could not queue frame " << i << " within " << kSendTimeout.count()
          << " ms: no connection takes it";
    }
  }
  // Never blocks: false when the message could not be queued (no connection yet, or the
  // queue is full).
  bool try_send(const Frames& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto flags = zmq::send_flags::dontwait |
                   (i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
      if (!socket_.send(zmq::buffer(frames[i].data(), frames[i].size()), flags)) return false;
    }
    return true;
  }

 private:
  static constexpr std::chrono::milliseconds kSendTimeout{5000};
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::optional<zmq::socket_t> monitor_;
  std::map<int, int> events_;
};

}  // namespace fastk::testing
